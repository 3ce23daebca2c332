package dissect

import (
	"testing"

	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

// Benchmarks of the decode and render paths a capture pays per frame.
// The seed request (25 bytes) is the smallest legal CreateAcls v3 request.

func BenchmarkDecodeSeedRequest(b *testing.B) {
	frame := readTestdata(b, "createacls-v3-request.bin")
	r := Builtin()
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for b.Loop() {
		r.Decode(frame, Options{})
	}
}

// deleteResp20 is a DeleteAcls v3 response with one filter result
// matching 20 ACLs.
func deleteResp20() []byte {
	resp := sampleDeleteResp(3, 0)
	resp.Results = resp.Results[1:]
	acls := resp.Results[0].MatchingACLs
	for len(acls) < 20 {
		acls = append(acls, acls[0])
	}
	resp.Results[0].MatchingACLs = acls[:20]
	return testkit.KmsgResponse(resp, 1)
}

func BenchmarkDecodeDeleteAclsResponse20(b *testing.B) {
	frame := deleteResp20()
	r := Builtin()
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for b.Loop() {
		r.Decode(frame, Options{Direction: Response, APIKey: 31, APIVersion: 3})
	}
}

func BenchmarkAppendJSON(b *testing.B) {
	m := Builtin().Decode(deleteResp20(), Options{Direction: Response, APIKey: 31, APIVersion: 3})
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendJSON(buf[:0], m)
	}
	b.SetBytes(int64(len(buf)))
}

func BenchmarkAppendText(b *testing.B) {
	m := Builtin().Decode(deleteResp20(), Options{Direction: Response, APIKey: 31, APIVersion: 3})
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendText(buf[:0], m.Tree)
	}
	b.SetBytes(int64(len(buf)))
}

// TestDeleteResp20 keeps the benchmark input what its name says.
func TestDeleteResp20(t *testing.T) {
	m := Builtin().Decode(deleteResp20(), Options{Direction: Response, APIKey: 31, APIVersion: 3})
	if err := checkShape(m, m.Raw, true); err != nil {
		t.Fatal(err)
	}
	if n := m.Tree.Find("DeleteAclsResponse", "FilterResults", "DeleteAclsFilterResult[0]", "MatchingAcls"); n == nil || n.Int != 20 {
		t.Fatalf("MatchingAcls: %v", n)
	}
}

// The capture path reuses one Decoder: after the first frame it decodes
// without allocating.
func BenchmarkDecoderSeedRequest(b *testing.B) {
	frame := readTestdata(b, "createacls-v3-request.bin")
	x := Builtin().NewDecoder()
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for b.Loop() {
		x.Decode(frame, Options{})
	}
}

func BenchmarkDecoderDeleteAclsResponse20(b *testing.B) {
	frame := deleteResp20()
	x := Builtin().NewDecoder()
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for b.Loop() {
		x.Decode(frame, Options{Direction: Response, APIKey: 31, APIVersion: 3})
	}
}
