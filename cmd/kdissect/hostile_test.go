package main

// Hostile inputs at the edges (issue 14): key logs that are FIFOs, pipes
// or junk, client certificates Go's x509 refuses, wire text that a
// spreadsheet or a terminal would act on, and one long name that would
// pad every row of a table. Each input is made here.

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode"

	"github.com/twmb/franz-go/pkg/kmsg"
	"golang.org/x/crypto/cryptobyte"
	cbasn1 "golang.org/x/crypto/cryptobyte/asn1"

	"github.com/kdissect/kdissect/internal/testtools/testkit"
	"github.com/kdissect/kdissect/internal/testtools/traffic"
)

// aclRequestCapture is one CreateAcls v3 exchange of the given creations,
// all accepted, with the given client id.
func aclRequestCapture(t *testing.T, clientID string, creations ...kmsg.CreateACLsRequestCreation) string {
	t.Helper()
	b := newPcap(t)
	c := openConn(b, 50500, 9092)
	r := kmsg.NewCreateACLsRequest()
	r.Version = 3
	r.Creations = creations
	for req := testkit.KmsgRequest(&r, 2, &clientID); len(req) > 0; {
		n := min(len(req), 1448)
		c.Send(true, req[:n])
		req = req[n:]
	}
	resp := kmsg.NewCreateACLsResponse()
	resp.Version = 3
	for range creations {
		resp.Results = append(resp.Results, kmsg.NewCreateACLsResponseResult())
	}
	for p := testkit.KmsgResponse(&resp, 2); len(p) > 0; {
		n := min(len(p), 1448)
		c.Send(false, p[:n])
		p = p[n:]
	}
	return b.File(t)
}

func creation(principal, resource string) kmsg.CreateACLsRequestCreation {
	cr := kmsg.NewCreateACLsRequestCreation()
	cr.ResourceType, cr.ResourceName, cr.ResourcePatternType = kmsg.ACLResourceTypeTopic, resource, kmsg.ACLResourcePatternTypeLiteral
	cr.Principal, cr.Host = principal, "*"
	cr.Operation, cr.PermissionType = kmsg.ACLOperationWrite, kmsg.ACLPermissionTypeAllow
	return cr
}

// A resource name that is a spreadsheet formula is text in the csv a
// reviewer opens, unless --csv-raw asks for the cells as they were.
func TestHostileCSVFormulas(t *testing.T) {
	formula := `=HYPERLINK("http://evil.example/","click")`
	pcap := aclRequestCapture(t, "@SUM(1+1)", creation("+User:x", formula), creation("User:bob", "-2+3"))
	cells := func(args ...string) []map[string]string {
		out, stderr, code := runCLI(t, "", append([]string{"audit", "--format", "csv"}, args...)...)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		if err != nil || len(recs) != 3 {
			t.Fatalf("%d records, %v:\n%s", len(recs), err, out)
		}
		var rows []map[string]string
		for _, rec := range recs[1:] {
			m := map[string]string{}
			for i, h := range recs[0] {
				m[h] = rec[i]
			}
			rows = append(rows, m)
		}
		return rows
	}
	rows := cells(pcap)
	if rows[0]["binding_resource_name"] != "'"+formula || rows[0]["binding_principal"] != "'+User:x" ||
		rows[0]["client_id"] != "'@SUM(1+1)" || rows[1]["binding_resource_name"] != "'-2+3" {
		t.Errorf("formulas not neutralised: %q", rows)
	}
	rows = cells("--csv-raw", pcap)
	if rows[0]["binding_resource_name"] != formula || rows[0]["client_id"] != "@SUM(1+1)" || rows[1]["binding_resource_name"] != "-2+3" {
		t.Errorf("--csv-raw altered the cells: %q", rows)
	}
}

// One 60 KB resource name among 3,000 rows, stdout not a terminal and
// COLUMNS unset: the table used to pad every row to the name (180 MB).
func TestHostileTableAmplification(t *testing.T) {
	long := strings.Repeat("n", 60_000)
	crs := []kmsg.CreateACLsRequestCreation{creation("User:alice", long)}
	for i := range 2999 {
		crs = append(crs, creation("User:alice", fmt.Sprintf("t%d", i)))
	}
	pcap := aclRequestCapture(t, "adm", crs...)
	t.Setenv("COLUMNS", "")
	os.Unsetenv("COLUMNS")
	out, stderr, code := runCLI(t, "", "audit", pcap)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 3002 {
		t.Fatalf("%d lines", len(lines))
	}
	if len(out) > 1<<20 || strings.Contains(out, long[:200]) || !strings.Contains(lines[1], "…") {
		t.Errorf("%d bytes of table; first row %.200q", len(out), lines[1])
	}
	js, _, _ := runCLI(t, "", "audit", "--format", "json", pcap)
	if !strings.Contains(js, `"resource_name":"`+long+`"`) {
		t.Error("the json does not hold the whole name")
	}
}

// hazard is a rune a terminal acts on or hides: controls, format
// characters (bidi, zero width), line separators.
func hazard(s string) (rune, bool) {
	for _, r := range s {
		if unicode.Is(unicode.Cc, r) && r != '\n' || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029' {
			return r, true
		}
	}
	return 0, false
}

// Bidi overrides and C1 controls in principal, resource name and client
// id reach neither --json nor audit --format json raw; jq reads the values
// unchanged.
func TestHostileJSONBidi(t *testing.T) {
	principal, resource, clientID := "User:\u202enimda\u202c", "orders\u2066\u200b\u0085", "adm\u202e\u009b31m"
	pcap := aclRequestCapture(t, clientID, creation(principal, resource))
	out, stderr, code := runCLI(t, "", "--json", pcap)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if r, bad := hazard(out); bad {
		t.Errorf("--json holds %U raw", r)
	}
	for _, want := range []string{`User:\u202enimda\u202c`, `orders\u2066\u200b\u0085`, `adm\u202e\u009b31m`} {
		if !strings.Contains(out, want) {
			t.Errorf("--json lacks %s", want)
		}
	}
	var values []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m struct {
			Tree jsonNode `json:"tree"`
		}
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		for _, path := range [][]string{{"RequestHeader", "client_id"},
			{"CreateAclsRequest", "Creations", "AclCreation[0]", "Principal"}, {"CreateAclsRequest", "Creations", "AclCreation[0]", "ResourceName"}} {
			if n := m.Tree.find(path...); n.Name != "" {
				values = append(values, fmt.Sprint(n.Value))
			}
		}
	}
	if strings.Join(values, "|") != clientID+"|"+principal+"|"+resource {
		t.Errorf("values %q", values)
	}

	out, _, _ = runCLI(t, "", "audit", "--format", "json", pcap)
	if r, bad := hazard(out); bad {
		t.Errorf("audit json holds %U raw", r)
	}
	rows := parseNDJSON(t, out)
	if len(rows) != 1 || rows[0]["client_id"] != clientID || rows[0]["binding"].(map[string]any)["principal"] != principal ||
		rows[0]["binding"].(map[string]any)["resource_name"] != resource {
		t.Errorf("audit rows %v", rows)
	}
}

// mtlsCapture is a TLS 1.2 mTLS connection that opens with ApiVersions at
// its first byte (so that a connection without a certificate is
// anonymous) and then creates an ACL, its client certificate's subject
// swapped for the given one (as long as the signed one: cn of 12 bytes).
// It returns the pcap and the key log.
func mtlsCapture(t *testing.T, subject []byte) (string, string) {
	t.Helper()
	template := subjectName(cbasn1.PrintableString, "svc-payments")
	if len(subject) != len(template) {
		t.Fatalf("subject of %d bytes, want %d", len(subject), len(template))
	}
	apiVersions := testkit.Request(18, 0, 1, testkit.Ptr("cli"), false, nil)
	apiVersionsResp := testkit.Response(1, false, []byte{0, 0, 0, 0, 0, 0})
	rec, err := traffic.RecordMTLS12(template, [][2][]byte{
		{apiVersions, apiVersionsResp},
		{testkit.WithCorr(seed(t, "createacls-v3-request"), 2, true), testkit.WithCorr(seed(t, "createacls-v3-response"), 2, false)},
	})
	if err != nil {
		t.Fatal(err)
	}
	der := bytes.Clone(rec.ClientCertDER)
	copy(der[bytes.LastIndex(der, template):], subject) // the issuer, the CA, comes first
	if err := rec.ReplaceClientCert(der); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	pcap, keys := filepath.Join(dir, "mtls.pcap"), filepath.Join(dir, "mtls.keylog")
	if err := os.WriteFile(pcap, rec.Pcap(50600, 9092), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keys, rec.KeyLog, 0o600); err != nil {
		t.Fatal(err)
	}
	return pcap, keys
}

func subjectName(tag cbasn1.Tag, cn string) []byte {
	var b cryptobyte.Builder
	b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) {
		b.AddASN1(cbasn1.SET, func(b *cryptobyte.Builder) {
			b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) {
				b.AddASN1ObjectIdentifier([]int{2, 5, 4, 3})
				b.AddASN1(tag, func(b *cryptobyte.Builder) { b.AddBytes([]byte(cn)) })
			})
		})
	})
	return b.BytesOrPanic()
}

type identityLine struct {
	Event     string `json:"event"`
	Problem   string `json:"problem"`
	APIName   string `json:"api_name"`
	Principal any    `json:"principal"`
	Auth      *struct {
		Source        string `json:"source"`
		Authenticated bool   `json:"authenticated"`
	} `json:"auth"`
}

// A client certificate whose subject Go's x509 refuses names its client
// as Kafka does; one whose subject cannot be read at all is a tls_problem
// and an unknown principal. Never User:ANONYMOUS.
func TestHostileClientCertificates(t *testing.T) {
	for _, tc := range []struct {
		name    string
		subject []byte
		want    any // the principal; nil: unknown
		text    string
	}{
		{"PrintableString with _", subjectName(cbasn1.PrintableString, "svc_payments"), "User:CN=svc_payments", "by User:CN=svc_payments"},
		{"PrintableString with a DDE formula", subjectName(cbasn1.PrintableString, "=cmd|/C!A0xx"), "User:CN==cmd|/C!A0xx", "by User:CN==cmd|/C!A0xx"},
		{"UTF8String not UTF-8, with a bidi override", subjectName(cbasn1.UTF8String, "\xffvc\u202epay\x1bzz"),
			"User:CN=\ufffdvc\u202epay\x1bzz", `by User:CN=�vc\u202epay\x1bzz`},
		{"a subject that is not a Name", append([]byte{0x30, 0x15, 0x04}, subjectName(cbasn1.PrintableString, "svc-payments")[3:]...), nil,
			"by an unreadable client certificate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pcap, keys := mtlsCapture(t, tc.subject)
			out, stderr, code := runCLI(t, "", "--json", "--all", "--tls-keylog", keys, pcap)
			if want := map[bool]int{true: exitMalformed, false: exitOK}[tc.want == nil]; code != want {
				t.Errorf("exit %d, want %d: %s", code, want, stderr)
			}
			if r, bad := hazard(out); bad {
				t.Errorf("--json holds %U raw", r)
			}
			messages, problems := 0, 0
			for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
				var m identityLine
				if err := json.Unmarshal([]byte(l), &m); err != nil {
					t.Fatalf("%v: %s", err, l)
				}
				switch {
				case m.Event == "tls_problem" && m.Problem == "unreadable_certificate":
					problems++
				case m.Event == "":
					messages++
					if m.Principal != tc.want || m.Auth == nil || m.Auth.Source != "tls" || !m.Auth.Authenticated {
						t.Errorf("%s: principal %v, auth %+v; want %v from tls", m.APIName, m.Principal, m.Auth, tc.want)
					}
				}
			}
			if messages != 4 || problems != map[bool]int{true: 1, false: 0}[tc.want == nil] {
				t.Errorf("%d messages, %d unreadable_certificate problems:\n%s", messages, problems, out)
			}
			sum, _, _ := runCLI(t, "", "--summary", "--tls-keylog", keys, pcap)
			if !strings.Contains(sum, "CreateAcls v3 request corr=2") || !strings.Contains(sum, tc.text) || strings.Contains(sum, "ANONYMOUS") {
				t.Errorf("summary does not end with %q:\n%s", tc.text, sum)
			}
			if r, bad := hazard(sum); bad {
				t.Errorf("--summary holds %U raw", r)
			}
		})
	}
}

// junkKeyLog is what a hostile or broken tool leaves in a key log, around
// the real lines: junk, a line of a megabyte, NULs.
func junkKeyLog(t *testing.T, real []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("# hostile\n\x00\x00\x00\n")
	b.WriteString(strings.Repeat("junk ", 200_000) + "\n")
	for i := range 1000 {
		fmt.Fprintf(&b, "CLIENT_RANDOM %064x zz\n", i)
	}
	b.Write(real)
	b.WriteString("CLIENT_RANDOM no-newline-at-the-end")
	return b.Bytes()
}

// A key log given by process substitution (a pipe, /dev/fd/N) decodes
// exactly what the file does, even one of junk.
func TestHostileKeyLogProcessSubstitution(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal("bash is needed to give a key log by process substitution")
	}
	bin := kdissectBinary(t)
	real, err := os.ReadFile(shippedTLS + ".keylog")
	if err != nil {
		t.Fatal(err)
	}
	keys := filepath.Join(t.TempDir(), "junk.keylog")
	if err := os.WriteFile(keys, junkKeyLog(t, real), 0o600); err != nil {
		t.Fatal(err)
	}
	// run gives stdout, stderr and the most memory the process held (bash
	// execs kdissect, or waits for it: the figure is kdissect's). Linux
	// keeps a process's peak across fork and exec, so a child forked from
	// this test would start at the test's own peak (large under -race):
	// /usr/bin/time forks bash from its own small process and reports
	// that child's peak alone.
	timeBin, err := exec.LookPath("/usr/bin/time")
	if err != nil {
		t.Fatal("/usr/bin/time (Debian's time package, which .ci/run installs) measures kdissect's peak memory here")
	}
	run := func(script string) (string, string, int64) {
		t.Helper()
		peak := filepath.Join(t.TempDir(), "peak")
		cmd := exec.Command(timeBin, "-f", "%M", "-o", peak, bash, "-c", script, "bash", bin, keys, shippedTLS+".pcap")
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v: %s", script, err, errb.String())
		}
		raw, err := os.ReadFile(peak)
		kib, perr := strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64)
		if err != nil || perr != nil {
			t.Fatalf("%s: no peak memory from /usr/bin/time: %v %v %q", script, err, perr, raw)
		}
		return out.String(), errb.String(), kib << 10
	}
	fileOut, fileErr, _ := run(`"$1" --json --tls-keylog "$2" "$3"`)
	// Skipped: the NULs, the long line, the 1,000 bad secrets and the last
	// line, without its newline: the file is whole, it counts.
	if !strings.Contains(fileOut, `"decrypted":true`) || !strings.Contains(fileErr, "skipped 1003 lines") {
		t.Fatalf("the file itself does not decrypt: %s", fileErr)
	}
	for _, script := range []string{
		`"$1" --json --tls-keylog <(cat "$2") "$3"`,
		`cat "$2" | "$1" --json --tls-keylog /dev/stdin "$3"`,
		`"$1" --json --tls-keylog <(cat "$2") --tls-keylog <(true) "$3"`, // and an empty one
	} {
		out, errText, _ := run(script)
		if out != fileOut || errText != fileErr {
			t.Errorf("%s: output differs from the file's (%d vs %d bytes): %s", script, len(out), len(fileOut), errText)
		}
	}

	// Memory follows the secrets kept, not the key log: 190 MB of junk
	// lines through a pipe, and a file whose first line is 200 MB of NULs
	// (sparse: nothing is written to disk), each before the real lines.
	sparse := filepath.Join(t.TempDir(), "sparse.keylog")
	f, err := os.Create(sparse)
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(200 << 20)
	f.WriteAt(append([]byte("\n"), real...), 200<<20)
	f.Close()
	refOut, _, _ := run(`exec "$1" --json --tls-keylog ` + shippedTLS + `.keylog "$3"`)
	for _, script := range []string{
		`exec "$1" --json --tls-keylog <(yes 'junk line of a hostile key log' | head -n 6000000; cat ` + shippedTLS + `.keylog) "$3"`,
		`exec "$1" --json --tls-keylog ` + sparse + ` "$3"`,
	} {
		out, _, maxRSS := run(script)
		if out != refOut {
			t.Errorf("%.60s…: output differs from the real key log's", script)
		}
		if maxRSS > 100<<20 {
			t.Errorf("%.60s…: %d MB resident at most, want under 100", script, maxRSS>>20)
		}
	}
}

// Ctrl-C ends a run blocked on a key log: a FIFO nobody writes to (the
// open waits) or a pipe whose writer is silent (the read waits), whether
// SIGINT comes as it does from a terminal or is ignored on entry, as a
// shell script leaves it for a job it starts in the background.
func TestHostileKeyLogCtrlC(t *testing.T) {
	bin := kdissectBinary(t)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "keys.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, script string
	}{
		{"FIFO without a writer", `exec "$0" --tls-keylog "$1" "$2"`},
		{"FIFO without a writer, SIGINT ignored on entry", `trap '' INT; exec "$0" --tls-keylog "$1" "$2"`},
		{"silent pipe, SIGINT ignored on entry", `trap '' INT; exec "$0" --tls-keylog <(sleep 600) "$2"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command("sh", "-c", tc.script, bin, fifo, shippedTLS+".pcap")
			if strings.Contains(tc.script, "<(") {
				cmd = exec.Command("bash", "-c", tc.script, bin, fifo, shippedTLS+".pcap")
			}
			var errb bytes.Buffer
			cmd.Stderr = &errb
			// The process group goes at the end, with the pipe's silent
			// writer; it holds stderr open, which Wait need not wait for.
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			cmd.WaitDelay = time.Second
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
			// Let it reach the key log (it reads nothing else first): a
			// signal before its handler is set would kill it, which is
			// not what this tests. A loaded machine can take seconds.
			waitBlockedOnKeyLog(t, cmd.Process.Pid)
			cmd.Process.Signal(syscall.SIGINT)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.ExitCode() != exitUsage ||
					!strings.Contains(errb.String(), "--tls-keylog") || !strings.Contains(errb.String(), "interrupt") {
					t.Errorf("ended with %v, stderr %q; want exit %d naming the key log and the interrupt", err, errb.String(), exitUsage)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("still running 10 s after SIGINT: %s", errb.String())
			}
		})
	}
}

// waitBlockedOnKeyLog waits until one of pid's threads sleeps in the kernel
// opening a FIFO without a writer or in the poller reading a silent pipe:
// kdissect sets its signal handler before it opens the key log, so from then
// on a SIGINT is its to handle.
func waitBlockedOnKeyLog(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/wchan", pid))
		for _, w := range tasks {
			b, _ := os.ReadFile(w)
			if ch := string(b); strings.Contains(ch, "partner") || strings.Contains(ch, "fifo") ||
				strings.Contains(ch, "epoll") || strings.Contains(ch, "ep_poll") {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("kdissect (pid %d) never blocked on its key log", pid)
}
