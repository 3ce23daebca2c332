package tui

import (
	"fmt"

	"github.com/kdissect/kdissect/dissect"
)

// cacheSize is how many decoded messages the explorer keeps.
const cacheSize = 8

// msgCache keeps the last few decoded messages, most recent last.
type msgCache struct {
	items []cacheItem
}

type cacheItem struct {
	index int
	msg   *dissect.Message
	err   error
}

// get returns the decoded message for index, calling load on a miss. A
// panicking loader (a decoder bug on hostile bytes) becomes an error
// instead of taking the terminal down with it.
func (c *msgCache) get(index int, load Loader) (*dissect.Message, error) {
	for i, it := range c.items {
		if it.index == index {
			copy(c.items[i:], c.items[i+1:])
			c.items[len(c.items)-1] = it
			return it.msg, it.err
		}
	}
	it := cacheItem{index: index}
	it.msg, it.err = safeLoad(load, index)
	if len(c.items) == cacheSize {
		copy(c.items, c.items[1:])
		c.items = c.items[:cacheSize-1]
	}
	c.items = append(c.items, it)
	return it.msg, it.err
}

func safeLoad(load Loader, index int) (msg *dissect.Message, err error) {
	if load == nil {
		return nil, fmt.Errorf("no loader")
	}
	defer func() {
		if r := recover(); r != nil {
			msg, err = nil, fmt.Errorf("decoding message %d panicked: %v", index, r)
		}
	}()
	return load(index)
}
