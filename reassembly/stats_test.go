package reassembly

import (
	"reflect"
	"testing"
)

// Stats.Add must sum every counter, also those added later.
func TestStatsAddSumsEveryCounter(t *testing.T) {
	var a, b Stats
	va, vb := reflect.ValueOf(&a).Elem(), reflect.ValueOf(&b).Elem()
	for i := 0; i < va.NumField(); i++ {
		va.Field(i).SetInt(int64(i + 1))
		vb.Field(i).SetInt(int64(100 * (i + 1)))
	}
	a.Add(b)
	for i := 0; i < va.NumField(); i++ {
		if got, want := va.Field(i).Int(), int64(101*(i+1)); got != want {
			t.Errorf("%s: %d, want %d", va.Type().Field(i).Name, got, want)
		}
	}
}
