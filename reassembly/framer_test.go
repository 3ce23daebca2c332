package reassembly

import "testing"

// The request ring keeps the last RecentRequests keys across its wrap; a
// response takes the newest open request with its key, once.
func TestRequestRing(t *testing.T) {
	var f framer
	for k := range uint32(100) {
		f.remember(k, k%2 == 0, true)
	}
	if n := len(f.keys()); n != RecentRequests {
		t.Fatalf("%d keys kept, want %d", n, RecentRequests)
	}
	if _, found := f.take(35); found {
		t.Error("key 35 is still known after 100 requests")
	}
	for _, k := range []uint32{36, 37, 63, 64, 99} {
		keep, found := f.take(k)
		if !found || keep != (k%2 == 0) {
			t.Errorf("take(%d) = %v %v, want %v true", k, keep, found, k%2 == 0)
		}
		if _, again := f.take(k); again {
			t.Errorf("key %d is taken twice", k)
		}
	}
	// The same key twice: the newer request is answered first.
	f.remember(500, false, true)
	f.remember(500, true, true)
	f.remember(501, true, false) // answered by nothing
	if keep, _ := f.take(500); !keep {
		t.Error("the older of two requests with one key was taken first")
	}
	if keep, found := f.take(500); !found || keep {
		t.Error("the older request with the key was not taken second")
	}
	if _, found := f.take(501); found {
		t.Error("a request remembered as answered by nothing was taken")
	}
	if !f.hasCorr(501) {
		t.Error("its key is not a candidate for re-synchronising")
	}
}
