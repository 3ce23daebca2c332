package dissect

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

// rawCheck fails when a message handed out does not hold the bytes of the
// frame given for it, and counts the messages.
type rawCheck struct {
	t     *testing.T
	want  map[int][]byte // by exchange index
	count int
}

func (r *rawCheck) Message(_ string, x Exchange, m *Message) {
	r.count++
	if !bytes.Equal(m.Raw, r.want[x.Index]) || len(m.Problems) > 0 {
		r.t.Errorf("message %d: raw of %d bytes differs from its frame, problems %v", x.Index, len(m.Raw), m.Problems)
	}
}
func (r *rawCheck) Unmatched(string, Unmatched)   {}
func (r *rawCheck) Incomplete(string, Incomplete) {}
func (r *rawCheck) Event(string)                  {}

// TestSessionReusesFrames: the copy a session keeps of each frame it hands
// out is made into the frame of a message already handed out, so a long
// stream of large frames allocates far less than their bytes, and every
// message still holds its own frame's bytes (of differing sizes, so that
// a reused frame longer or shorter than the next shows through).
func TestSessionReusesFrames(t *testing.T) {
	frames := make([][]byte, 3)
	for i := range frames {
		p := kmsg.NewPtrSyncGroupRequest()
		p.SetVersion(3)
		p.Group, p.MemberID = "g", "m"
		a := kmsg.NewSyncGroupRequestGroupAssignment()
		a.MemberID, a.MemberAssignment = "m", bytes.Repeat([]byte{byte('a' + i)}, 48<<10-i*(8<<10))
		p.GroupAssignment = append(p.GroupAssignment, a)
		frames[i] = testkit.KmsgRequest(p, int32(i), testkit.Ptr("c"))
	}
	r := &rawCheck{t: t, want: map[int][]byte{}}
	s := NewSession[string](NewRegistry(), r)
	s.Wants = func(int16) bool { return true }
	const n = 300
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var framed int
	for i := range n {
		f := frames[i%len(frames)]
		r.want[i+1] = f
		framed += len(f)
		s.Frame("", client(1, i, f))
	}
	runtime.ReadMemStats(&after)
	if r.count != n {
		t.Fatalf("%d messages handed out, want %d", r.count, n)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > uint64(framed/4) {
		t.Errorf("%d frames of %d bytes in all allocated %d bytes: the frames are copied anew", n, framed, got)
	}
}
