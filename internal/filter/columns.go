package filter

import (
	"fmt"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/capture"
)

// Columns are the fields tshark's -T fields prints (its -e), named and
// read as -Y names and reads the fields it tests: kdissect's record
// fields, Wireshark's names, Kafka's body fields at any depth or by path.
// A secret, a null and a value the frame was cut before are occurrences
// without a value, as -Y sees them.
type Columns struct {
	names  []string
	fields []*field
	e      env
}

// CompileColumns resolves names against the run's definitions (reg); an
// unknown name is an error that says which, as -Y's.
func CompileColumns(names []string, reg *dissect.Registry) (*Columns, error) {
	s := messageSchema(reg)
	c := &Columns{names: names, e: env{buf: make([]Value, 0, 16)}}
	for _, n := range names {
		if !isName(n) {
			return nil, fmt.Errorf("-e: %q is not a field name", n)
		}
		fl, err := s.resolve(token{kind: tWord, text: n, src: n, col: 1})
		if err != nil {
			msg := err.Error()
			if fe, ok := err.(*Error); ok {
				msg = fe.Msg // the column of a one-word expression says nothing
				if fe.Hint != "" {
					msg += "; " + fe.Hint
				}
			}
			return nil, fmt.Errorf("-e: %s", msg)
		}
		c.fields = append(c.fields, fl)
	}
	return c, nil
}

// Names are the columns as given.
func (c *Columns) Names() []string { return c.names }

// Values are the occurrences of column i in r, valid until the next call.
func (c *Columns) Values(r *capture.Record, i int) []Value {
	c.e.rec = r
	v := c.e.values(c.fields[i])
	c.e.rec = nil
	return v
}
