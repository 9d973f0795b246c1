package mvcc

import (
	"github.com/pivotdb/pivotdb/storage/enginekey"
)

// ComparerName is recorded by Pebble in every store written with Comparer
// (enginekey.ComparerName).
const ComparerName = enginekey.ComparerName

// Comparer orders engine keys: enginekey.Comparer, which storage.Open uses
// for the server's store. It lives in the leaf package enginekey so that
// storage can use it without importing this package.
var Comparer = enginekey.Comparer

func split(k []byte) int                { return enginekey.Split(k) }
func compare(a, b []byte) int           { return enginekey.Compare(a, b) }
func compareSuffixes(a, b []byte) int   { return enginekey.CompareSuffixes(a, b) }
func userKeyOf(k []byte) ([]byte, bool) { return enginekey.UserKeyOf(k) }

// Comparer.FormatKey (Pebble's logs and tools) shows keys as FormatKey does.
func init() { enginekey.FormatKeyFunc = FormatKey }
