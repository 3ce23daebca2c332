package dissect

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

// The credentials the admin APIs carry are hidden like SASL's, in the text
// tree, JSON, the summary and the byte layout, unless ShowSecrets: SCRAM
// salts and salted passwords, delegation-token HMACs, config values whose
// key names a secret or that the broker marks sensitive, and what an
// Envelope forwards. Values that are not secrets stay visible.

const (
	secretSalt     = "salt:Kq7#pLm2vX9!"
	secretSalted   = "salted:Zr4$wQ8nT1@"
	secretHMAC     = "hmac:Yt6&uJ3kD5%e"
	secretJAAS     = `ScramLoginModule required password="jaas-pw-77";`
	secretKeyPass  = "keypass:Hb2*oN7q"
	secretFlagged  = "flagged:Mv5^cX0z"
	secretEnvelope = "envelope:Pq1(rS4t"
	notSecret      = "604800000-visible"
)

type secretCase struct {
	name     string
	frame    []byte
	o        Options
	secrets  []string
	visible  []string // values that must stay shown
	redacted int      // nodes hidden
}

func secretCases(t *testing.T) []secretCase {
	var cases []secretCase
	add := func(name string, frame []byte, o Options, redacted int, visible []string, secrets ...string) {
		cases = append(cases, secretCase{name, frame, o, secrets, visible, redacted})
	}
	resp := func(key, v int16) Options { return Options{Direction: Response, APIKey: key, APIVersion: v} }

	for v := int16(0); v <= 0; v++ {
		r := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
		r.SetVersion(v)
		u := kmsg.NewAlterUserSCRAMCredentialsRequestUpsertion()
		u.Name, u.Mechanism, u.Iterations = "alice", 1, 8192
		u.Salt, u.SaltedPassword = []byte(secretSalt), []byte(secretSalted)
		r.Upsertions = append(r.Upsertions, u)
		add(fmt.Sprintf("AlterUserScramCredentials v%d", v), testkit.KmsgRequest(r, 1, nil), Options{}, 2, []string{"alice"}, secretSalt, secretSalted)
	}
	for v := int16(0); v <= 3; v++ {
		r := kmsg.NewPtrCreateDelegationTokenResponse()
		r.SetVersion(v)
		r.TokenID, r.HMAC = "token-id-1", []byte(secretHMAC)
		add(fmt.Sprintf("CreateDelegationToken v%d response", v), testkit.KmsgResponse(r, 1), resp(38, v), 1, []string{"token-id-1"}, secretHMAC)

		d := kmsg.NewPtrDescribeDelegationTokenResponse()
		d.SetVersion(v)
		td := kmsg.NewDescribeDelegationTokenResponseTokenDetail()
		td.TokenID, td.HMAC = "token-id-2", []byte(secretHMAC)
		d.TokenDetails = append(d.TokenDetails, td, td)
		add(fmt.Sprintf("DescribeDelegationToken v%d response", v), testkit.KmsgResponse(d, 1), resp(41, v), 2, []string{"token-id-2"}, secretHMAC)
	}
	for v := int16(0); v <= 2; v++ {
		r := kmsg.NewPtrRenewDelegationTokenRequest()
		r.SetVersion(v)
		r.HMAC = []byte(secretHMAC)
		add(fmt.Sprintf("RenewDelegationToken v%d", v), testkit.KmsgRequest(r, 1, nil), Options{}, 1, nil, secretHMAC)
		e := kmsg.NewPtrExpireDelegationTokenRequest()
		e.SetVersion(v)
		e.HMAC = []byte(secretHMAC)
		add(fmt.Sprintf("ExpireDelegationToken v%d", v), testkit.KmsgRequest(e, 1, nil), Options{}, 1, nil, secretHMAC)

		a := kmsg.NewPtrAlterConfigsRequest()
		a.SetVersion(v)
		res := kmsg.NewAlterConfigsRequestResource()
		res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeBroker, "1"
		for _, kv := range [][2]string{
			{"listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config", secretJAAS},
			{"log.retention.ms", notSecret},
			{"SSL.KEY.PASSWORD", secretKeyPass}, // keys are matched without regard to case
		} {
			c := kmsg.NewAlterConfigsRequestResourceConfig()
			c.Name, c.Value = kv[0], testkit.Ptr(kv[1])
			res.Configs = append(res.Configs, c)
		}
		a.Resources = append(a.Resources, res)
		add(fmt.Sprintf("AlterConfigs v%d", v), testkit.KmsgRequest(a, 1, nil), Options{}, 2, []string{notSecret}, secretJAAS, secretKeyPass)
	}
	for v := int16(0); v <= 1; v++ {
		r := kmsg.NewPtrIncrementalAlterConfigsRequest()
		r.SetVersion(v)
		res := kmsg.NewIncrementalAlterConfigsRequestResource()
		res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeBroker, ""
		for _, kv := range [][2]string{{"ssl.keystore.password", secretKeyPass}, {"log.retention.ms", notSecret}} {
			c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
			c.Name, c.Value = kv[0], testkit.Ptr(kv[1])
			res.Configs = append(res.Configs, c)
		}
		r.Resources = append(r.Resources, res)
		add(fmt.Sprintf("IncrementalAlterConfigs v%d", v), testkit.KmsgRequest(r, 1, nil), Options{}, 1, []string{notSecret}, secretKeyPass)
	}
	for v := int16(0); v <= 4; v++ {
		r := kmsg.NewPtrDescribeConfigsResponse()
		r.SetVersion(v)
		res := kmsg.NewDescribeConfigsResponseResource()
		res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeTopic, "orders"
		// A broker sends null for a sensitive value; one that does not (a
		// proxy, a bug) still does not leak it. The key names no secret:
		// the flag alone hides it, and its synonyms' values with it.
		flagged := kmsg.NewDescribeConfigsResponseResourceConfig()
		flagged.Name, flagged.Value, flagged.IsSensitive = "custom.plugin.setting", testkit.Ptr(secretFlagged), true
		hidden := 1
		if v >= 1 {
			s := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
			s.Name, s.Value = "custom.plugin.setting", testkit.Ptr(secretFlagged)
			flagged.ConfigSynonyms = append(flagged.ConfigSynonyms, s)
			hidden++
		}
		plain := kmsg.NewDescribeConfigsResponseResourceConfig()
		plain.Name, plain.Value = "retention.ms", testkit.Ptr(notSecret)
		res.Configs = append(res.Configs, flagged, plain)
		r.Resources = append(r.Resources, res)
		add(fmt.Sprintf("DescribeConfigs v%d response", v), testkit.KmsgResponse(r, 1), resp(32, v), hidden, []string{notSecret}, secretFlagged)
	}
	for v := int16(5); v <= 7; v++ {
		r := kmsg.NewPtrCreateTopicsResponse()
		r.SetVersion(v)
		tp := kmsg.NewCreateTopicsResponseTopic()
		tp.Topic = "orders"
		c := kmsg.NewCreateTopicsResponseTopicConfig()
		c.Name, c.Value, c.IsSensitive = "x", testkit.Ptr(secretFlagged), true
		tp.Configs = append(tp.Configs, c)
		r.Topics = append(r.Topics, tp)
		add(fmt.Sprintf("CreateTopics v%d response", v), testkit.KmsgResponse(r, 1), resp(19, v), 1, []string{"orders"}, secretFlagged)
	}
	// What an Envelope forwards keeps the forwarded message's secrets
	// hidden: a SCRAM upsertion, a sensitive config, a token's HMAC.
	scram := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	su := kmsg.NewAlterUserSCRAMCredentialsRequestUpsertion()
	su.Name, su.Mechanism, su.Iterations = "alice", 1, 8192
	su.Salt, su.SaltedPassword = []byte(secretSalt), []byte(secretSalted)
	scram.Upsertions = append(scram.Upsertions, su)
	add("Envelope v0 AlterUserScramCredentials", testkit.EnvelopeRequest(scram, 1, nil, "User", "admin", envClient, 2, nil), Options{}, 2, []string{"alice"}, secretSalt, secretSalted)
	iac := kmsg.NewPtrIncrementalAlterConfigsRequest()
	iac.SetVersion(1)
	ires := kmsg.NewIncrementalAlterConfigsRequestResource()
	ires.ResourceType, ires.ResourceName = kmsg.ConfigResourceTypeBroker, "1"
	for _, kv := range [][2]string{{"ssl.keystore.password", secretKeyPass}, {"log.retention.ms", notSecret}} {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Value = kv[0], testkit.Ptr(kv[1])
		ires.Configs = append(ires.Configs, c)
	}
	iac.Resources = append(iac.Resources, ires)
	add("Envelope v0 IncrementalAlterConfigs", testkit.EnvelopeRequest(iac, 1, nil, "User", "admin", envClient, 2, nil), Options{}, 1, []string{notSecret}, secretKeyPass)
	tok := kmsg.NewPtrCreateDelegationTokenResponse()
	tok.SetVersion(3)
	tok.TokenID, tok.HMAC = "token-id-1", []byte(secretHMAC)
	add("Envelope v0 CreateDelegationToken response", testkit.EnvelopeResponse(tok, 1, 2),
		Options{Direction: Response, APIKey: 58, Inner: InnerAPI{Known: true, APIKey: 38, APIVersion: 3}}, 1, []string{"token-id-1"}, secretHMAC)
	// Its request not known, a response that no ACL response reads stays
	// hidden whole.
	envResp := kmsg.NewPtrEnvelopeResponse()
	envResp.ResponseData = []byte(secretEnvelope)
	add("Envelope v0 response", testkit.KmsgResponse(envResp, 1), resp(58, 0), 1, nil, secretEnvelope)
	return cases
}

func TestAdminSecretsHidden(t *testing.T) {
	for _, c := range secretCases(t) {
		for _, show := range []bool{false, true} {
			o := c.o
			o.ShowSecrets = show
			m := Builtin().Decode(c.frame, o)
			if len(m.Problems) > 0 {
				t.Fatalf("%s: problems %v", c.name, m.Problems)
			}
			hidden := 0
			m.Tree.Walk(func(n *Node, _ int) {
				// A value that holds a secret (an Envelope's RequestData)
				// is hidden for the secret a descendant is.
				if n.Redacted() && n.redact != redactHolds {
					hidden++
				}
			})
			want := c.redacted
			if show {
				want = 0
			}
			if hidden != want || len(m.SecretRanges()) != want {
				t.Errorf("%s (show %v): %d nodes hidden, %d secret ranges, want %d", c.name, show, hidden, len(m.SecretRanges()), want)
			}
			layout := AppendHexDump(nil, c.frame, m.Tree)
			hexCol, asciiCol := layoutBytes(t, layout)
			outputs := map[string][]byte{
				"text": AppendText(nil, m.Tree), "json": AppendJSON(nil, m), "summary": []byte(m.Summary),
				"layout": layout, "layout hex": hexCol, "layout ascii": asciiCol,
			}
			for _, s := range c.secrets {
				seen := false
				for what, out := range outputs {
					for _, form := range [][]byte{[]byte(s), []byte(hex.EncodeToString([]byte(s))), []byte(hex.EncodeToString([]byte(s))[:24])} {
						if bytes.Contains(out, form) {
							seen = true
							if !show {
								t.Errorf("%s: the %s shows the secret %q as %q", c.name, what, s, form)
							}
						}
					}
				}
				if show && !seen {
					t.Errorf("%s: with ShowSecrets, %q is nowhere to be seen", c.name, s)
				}
			}
			for _, s := range c.visible {
				if !bytes.Contains(outputs["text"], []byte(s)) || !bytes.Contains(outputs["layout ascii"], []byte(s)) {
					t.Errorf("%s (show %v): %q, not a secret, is hidden", c.name, show, s)
				}
			}
		}
	}
}

// The values of a secret are masked in the byte layout exactly: the
// length before a config value stays readable, the value's bytes do not.
func TestConfigSecretMasksItsBytesOnly(t *testing.T) {
	r := kmsg.NewPtrAlterConfigsRequest()
	r.SetVersion(2)
	res := kmsg.NewAlterConfigsRequestResource()
	c := kmsg.NewAlterConfigsRequestResourceConfig()
	c.Name, c.Value = "sasl.jaas.config", testkit.Ptr(secretJAAS)
	res.Configs = append(res.Configs, c)
	r.Resources = append(r.Resources, res)
	frame := testkit.KmsgRequest(r, 1, nil)
	m := Builtin().Decode(frame, Options{})
	v := m.Tree.Find("AlterConfigsRequest", "Resources", "AlterConfigsResource[0]", "Configs", "AlterableConfig[0]", "Value")
	if v == nil || !v.Redacted() {
		t.Fatalf("Value %+v", v)
	}
	rs := m.SecretRanges()
	if len(rs) != 1 || rs[0].Offset != v.Offset+1 || rs[0].Size != len(secretJAAS) {
		t.Errorf("secret ranges %v, want the %d value bytes after the 1-byte length at %d", rs, len(secretJAAS), v.Offset)
	}
	if got, want := v.Display(), fmt.Sprintf("<redacted, %d bytes> (compact, len+1=%d)", len(secretJAAS), len(secretJAAS)+1); got != want {
		t.Errorf("display %q, want %q", got, want)
	}
}

// A sensitive key is one that names a password, a secret, a JAAS login
// or a private key, whatever its case, and every key Kafka types as a
// password.
func TestSensitiveConfigKeys(t *testing.T) {
	for key, want := range map[string]bool{
		"ssl.key.password": true, "ssl.keystore.password": true, "ssl.truststore.password": true,
		"sasl.jaas.config": true, "listener.name.internal.plain.sasl.jaas.config": true,
		"listener.name.x.scram-sha-256.sasl.jaas.config": true, "SSL.KEY.PASSWORD": true,
		"sasl.oauthbearer.client.credentials.client.secret": true, "ssl.keystore.key": true,
		"remote.log.storage.private.key": true,
		// Every password-typed config of Kafka's brokers, and the ones Kafka 4.0 removed.
		"ssl.keystore.certificate.chain": true, "ssl.truststore.certificates": true,
		"listener.name.external.ssl.truststore.certificates": true, "password.encoder.secret": true,
		"password.encoder.old.secret": true, "delegation.token.secret.key": true,
		"delegation.token.master.key": true, "zookeeper.ssl.keystore.password": true,
		"zookeeper.ssl.truststore.password": true, "listener.name.internal.ssl.key.password": true,
		"retention.ms": false, "cleanup.policy": false, "ssl.protocol": false, "sasl.mechanism": false,
		"min.insync.replicas": false, "": false, "log.retention.ms": false, "max.message.bytes": false,
		"delegation.token.max.lifetime.ms": false, "sasl.oauthbearer.token.endpoint.url": false,
	} {
		if got := SensitiveConfig(key); got != want {
			t.Errorf("SensitiveConfig(%q) = %v", key, got)
		}
	}
}
