package tlslayer

// SetDecryptAll turns selective decryption off (true) or on, for the tests
// that compare the two; it returns the setting before.
func SetDecryptAll(on bool) bool {
	was := decryptAll
	decryptAll = on
	return was
}
