package dissect

import "strconv"

// Data sources beyond the frame. A compressed record batch is
// decompressed into bytes the frame does not hold; the nodes decoded from
// them count their offsets in those bytes, as Wireshark's "Decompressed"
// tab, and say so with Node.Source (0 the frame, k Message.Sources[k-1]).

// Source is bytes a message's nodes point into other than its frame.
type Source struct {
	Codec string // how Data was compressed: gzip, snappy, lz4, zstd
	Data  []byte // the decompressed bytes
	// Parent is the source that holds the compressed bytes (0 the frame),
	// Offset and Size where they are in it.
	Parent       int
	Offset, Size int
}

// SourceData is the bytes that offsets of source k count in: the frame
// for 0, nil for a source the message does not have.
func (m *Message) SourceData(k int) []byte {
	switch {
	case k == 0:
		return m.Raw
	case k > 0 && k <= len(m.Sources):
		return m.Sources[k-1].Data
	}
	return nil
}

// AppendLayout renders the byte layout of a message: the frame as
// AppendHexDump does, then each decompressed source as a block of its
// own, headed by where its compressed bytes are.
func AppendLayout(dst []byte, m *Message) []byte {
	var leaves [][]*Node
	if m.Tree != nil {
		leaves = sourceLeaves(m.Tree, len(m.Sources))
	}
	dst = appendHexDump(dst, m.Raw, m.Tree, leaves)
	for i, s := range m.Sources {
		k := i + 1
		dst = append(dst, "\nsource #"...)
		dst = strconv.AppendInt(dst, int64(k), 10)
		dst = append(dst, ": "...)
		dst = strconv.AppendInt(dst, int64(len(s.Data)), 10)
		dst = append(dst, " bytes decompressed ("...)
		dst = append(dst, s.Codec...)
		dst = append(dst, ") from "...)
		dst = appendSourceSpan(dst, s.Parent, s.Offset, s.Size)
		dst = append(dst, '\n')
		var ls []*Node
		if leaves != nil {
			ls = leaves[k]
		}
		dst = appendHexRows(dst, s.Data, ls, nil)
	}
	return dst
}

// sourceLeaves lists, in tree order, the nodes of each source up to
// sources (0 the frame) that name bytes in its dump: those with bytes and
// no children in the same source (a compressed payload is a leaf of the
// source it sits in, its records are another source's). One walk serves
// every source, as a message may have thousands.
func sourceLeaves(tree *Node, sources int) [][]*Node {
	leaves := make([][]*Node, sources+1)
	tree.Walk(func(n *Node, _ int) {
		if int(n.Source) > sources || n.Size <= 0 {
			return
		}
		for _, c := range n.Children {
			if c.Source == n.Source {
				return
			}
		}
		leaves[n.Source] = append(leaves[n.Source], n)
	})
	return leaves
}

// AtSource is At for the bytes of source src: the path (root first) to
// the innermost node of that source covering off, through the nodes of
// other sources that hold it; nil when none does.
func (n *Node) AtSource(src uint16, off int) []*Node {
	if src == 0 {
		return n.At(off)
	}
	var path []*Node
	var find func(c *Node) bool
	find = func(c *Node) bool {
		path = append(path, c)
		if c.Source == src && off >= c.Offset && off < c.Offset+c.Size {
			// Innermost: a child of the same source covering off, if any.
			for cur := c; ; {
				var next *Node
				for _, k := range cur.Children {
					if k.Source == src && k.Size > 0 && off >= k.Offset && off < k.Offset+k.Size {
						next = k
					}
				}
				if next == nil {
					return true
				}
				path = append(path, next)
				cur = next
			}
		}
		if c.Source != src {
			for _, k := range c.Children {
				if find(k) {
					return true
				}
			}
		}
		path = path[:len(path)-1]
		return false
	}
	if n == nil || !find(n) {
		return nil
	}
	return path
}

// appendSourceSpan renders a place in source src: `[0x0040, 25B]` in the
// frame, `[#1:0x0040, 25B]` in source 1.
func appendSourceSpan(dst []byte, src, off, size int) []byte {
	if src == 0 {
		return AppendSpan(dst, off, size)
	}
	dst = append(dst, "[#"...)
	dst = strconv.AppendInt(dst, int64(src), 10)
	dst = append(dst, ':')
	dst = appendHexOffset(dst, off)
	dst = append(dst, ", "...)
	dst = strconv.AppendInt(dst, int64(size), 10)
	return append(dst, "B]"...)
}

// appendSourceSpanAt renders a place in a source without a size:
// `source #1 at 0x0040`.
func appendSourceSpanAt(dst []byte, src, off int) []byte {
	dst = append(dst, "source #"...)
	dst = strconv.AppendInt(dst, int64(src), 10)
	dst = append(dst, " at "...)
	return appendHexOffset(dst, off)
}

// appendSourcesJSON writes the message's "sources" member, when it has
// any: `,"sources":[{"source":1,"codec":"gzip","parent":0,"offset":N,
// "size":N,"length":N}]`.
func appendSourcesJSON(dst []byte, m *Message) []byte {
	if len(m.Sources) == 0 {
		return dst
	}
	dst = append(dst, `,"sources":[`...)
	for i, s := range m.Sources {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"source":`...)
		dst = strconv.AppendInt(dst, int64(i+1), 10)
		dst = append(dst, `,"codec":`...)
		dst = AppendJSONString(dst, s.Codec)
		dst = append(dst, `,"parent":`...)
		dst = strconv.AppendInt(dst, int64(s.Parent), 10)
		dst = append(dst, `,"offset":`...)
		dst = strconv.AppendInt(dst, int64(s.Offset), 10)
		dst = append(dst, `,"size":`...)
		dst = strconv.AppendInt(dst, int64(s.Size), 10)
		dst = append(dst, `,"length":`...)
		dst = strconv.AppendInt(dst, int64(len(s.Data)), 10)
		dst = append(dst, '}')
	}
	return append(dst, ']')
}
