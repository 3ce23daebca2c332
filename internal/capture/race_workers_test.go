//go:build race

package capture_test

// The race detector makes a run ten times slower: it compares one worker
// with two and four only, on smaller generated captures.
func init() {
	workerCounts = []int{2, 4}
	benchScale = 4
}
