package dissect

import "testing"

func TestKafkaFraming(t *testing.T) {
	k := KafkaFraming{MaxFrame: 1 << 20}
	// CreateAcls v1, correlation id 0x01020304, client id "ab".
	req := []byte{0, 0, 0, 12, 0, 30, 0, 1, 1, 2, 3, 4, 0, 2, 'a', 'b'}
	if got := k.Size(req); got != 12 {
		t.Errorf("Size = %d, want 12", got)
	}
	if got := k.Size([]byte{0xff, 0xff, 0xff, 0xfe}); got != -2 {
		t.Errorf("Size of a negative prefix = %d, want -2", got)
	}
	if k.PrefixLen() != 4 || k.MinSize(true) != 8 || k.MinSize(false) != 4 || k.MinHead() != 14 {
		t.Errorf("PrefixLen, MinSize, MinHead = %d %d %d %d, want 4 8 4 14",
			k.PrefixLen(), k.MinSize(true), k.MinSize(false), k.MinHead())
	}
	if !k.PlausibleRequest(req) {
		t.Error("a CreateAcls v1 head is not plausible")
	}
	if (KafkaFraming{MaxFrame: 11}).PlausibleRequest(req) {
		t.Error("a head larger than MaxFrame is plausible")
	}
	if key, ok := k.RequestKey(req); !ok || key != 0x01020304 {
		t.Errorf("RequestKey = %#x %v, want 0x1020304 true", key, ok)
	}
	if _, ok := k.RequestKey(req[:11]); ok {
		t.Error("RequestKey of 11 bytes is ok")
	}
	resp := []byte{0, 0, 0, 4, 0xff, 0xff, 0xff, 0xff}
	if key, ok := k.ResponseKey(resp); !ok || key != 0xffffffff {
		t.Errorf("ResponseKey = %#x %v, want 0xffffffff true", key, ok)
	}
	if _, ok := k.ResponseKey(resp[:7]); ok {
		t.Error("ResponseKey of 7 bytes is ok")
	}
}
