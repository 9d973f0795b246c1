package catalog

import (
	"testing"

	"github.com/pivotdb/pivotdb/storage/hlc"
)

func TestGenerations(t *testing.T) {
	c := &Catalog{}
	snaps := make([]*Snapshot, maxGenerations+5)
	for i := range snaps {
		snaps[i] = &Snapshot{}
		c.current.Lock()
		c.setCurrent(snaps[i], hlc.Timestamp{WallTime: int64(10 * (i + 1))})
		c.current.Unlock()
	}
	last := len(snaps) - 1
	if s, exact := c.At(hlc.Timestamp{WallTime: int64(10*(last+1) + 5)}); s != snaps[last] || !exact {
		t.Fatal("a read after the last change must see it")
	}
	if s, exact := c.At(hlc.Timestamp{WallTime: int64(10*(last+1) - 1)}); s != snaps[last-1] || !exact {
		t.Fatal("a read just before a change must not see it")
	}
	if s, exact := c.At(hlc.Timestamp{WallTime: 1}); exact || s != snaps[len(snaps)-maxGenerations] {
		t.Fatalf("a read older than every generation kept: exact %v", exact)
	}
	// A change installed without a timestamp counts from the last one.
	extra := &Snapshot{}
	c.current.Lock()
	c.setCurrent(extra, hlc.Timestamp{})
	c.current.Unlock()
	if s, _ := c.At(hlc.Timestamp{WallTime: int64(10 * (last + 1))}); s != extra {
		t.Fatal("a change without a timestamp replaces the last generation")
	}
	if len(c.gens) != maxGenerations {
		t.Fatalf("%d generations kept", len(c.gens))
	}
}

func TestHistoryStart(t *testing.T) {
	c := &Catalog{}
	first, second := &Snapshot{}, &Snapshot{}
	c.current.Lock()
	c.setCurrent(first, hlc.Timestamp{})
	c.current.Unlock()
	c.SetHistoryStart(hlc.Timestamp{WallTime: 100})
	if s, exact := c.At(hlc.Timestamp{WallTime: 50}); s != first || exact {
		t.Fatalf("a read before the history start: exact %v", exact)
	}
	if s, exact := c.At(hlc.Timestamp{WallTime: 100}); s != first || !exact {
		t.Fatalf("a read at the history start: exact %v", exact)
	}
	c.current.Lock()
	c.setCurrent(second, hlc.Timestamp{WallTime: 200})
	c.current.Unlock()
	if s, exact := c.At(hlc.Timestamp{WallTime: 150}); s != first || !exact {
		t.Fatal("a read between the start and a change sees the loaded catalog")
	}
	if s, exact := c.At(hlc.Timestamp{WallTime: 250}); s != second || !exact {
		t.Fatal("a read after a change sees it")
	}
}
