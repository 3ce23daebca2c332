package dissect

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kversion"
)

// TestAPIVersionsDowngradeAgainstKfake: a client newer than its broker
// asks ApiVersions at a version the broker does not serve; the broker
// (kfake, as Kafka's) answers in v0 with UNSUPPORTED_VERSION, and the
// client asks again lower. Every frame of such a conversation decodes
// without a problem, the answer to the first ask in v0.
func TestAPIVersionsDowngradeAgainstKfake(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a broker")
	}
	// Kafka 2.3 serves ApiVersions v0-v2; franz-go asks at its newest.
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(0), kfake.MaxVersions(kversion.V2_3_0()),
		kfake.SeedTopics(1, "old"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rec := &recorder{}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.Dialer(rec.dial), kgo.MaxVersions(kversion.Stable()))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "old", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cl.Close()

	var asks, downgrades, retries int
	for i := range rec.conns {
		msgs, _ := decodeCapture(t, rec.frames(i), Options{}, false, false)
		var asked int16 = -1
		for _, d := range msgs {
			if len(d.m.Problems) > 0 {
				t.Errorf("%s: %v", d.m.Summary, d.m.Problems)
			}
			if err := checkShape(d.m, d.frame, false); err != nil {
				t.Errorf("%s: %v", d.m.Summary, err)
			}
			if d.m.APIKey != 18 {
				continue
			}
			if d.m.Direction == Request {
				asks++
				asked = d.m.APIVersion
				continue
			}
			body := d.m.Tree.Child("ApiVersionsResponse")
			code := body.Child("ErrorCode").Int
			switch {
			case asked > 2:
				downgrades++
				if d.m.APIVersion != 0 || code != 35 {
					t.Errorf("answer to v%d: v%d, error %d; want v0, UNSUPPORTED_VERSION", asked, d.m.APIVersion, code)
				}
				if keys := body.Child("ApiKeys"); keys == nil || len(keys.Children) != 2 ||
					keys.Children[1].Child("ApiKey").Int != 18 || keys.Children[1].Child("MaxVersion").Int != 2 {
					t.Errorf("answer to v%d: ApiKeys %v, want ApiVersions up to v2", asked, keys)
				}
			default:
				retries++
				if d.m.APIVersion != asked || code != 0 {
					t.Errorf("answer to v%d: v%d, error %d", asked, d.m.APIVersion, code)
				}
			}
		}
	}
	if downgrades == 0 || retries == 0 {
		t.Fatalf("%d ApiVersions requests, %d answered in v0, %d at their version: want both", asks, downgrades, retries)
	}
}
