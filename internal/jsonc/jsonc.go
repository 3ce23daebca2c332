// Package jsonc reads the JSON with // comments that Kafka's message
// definitions (and ours) are written in.
package jsonc

import "bytes"

// Strip blanks // comments outside strings, keeping offsets so that JSON
// errors still point at the right place.
func Strip(src []byte) []byte {
	out := bytes.Clone(src)
	inStr, esc := false, false
	for i := 0; i < len(out); i++ {
		c := out[i]
		switch {
		case inStr:
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			for ; i < len(out) && out[i] != '\n'; i++ {
				out[i] = ' '
			}
		}
	}
	return out
}
