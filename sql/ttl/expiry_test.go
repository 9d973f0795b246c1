package ttl

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/pivotdb/pivotdb/sql/tablesettings"
	"github.com/pivotdb/pivotdb/sql/types"
)

// TestExpiry runs testdata/expiry. The command
//
//	expiry type=Timestamp interval=PT1H [unit=SECONDS] now=2024-01-01T12:00:00Z
//	value
//	...
//
// evaluates the TTL at now and prints, for each value (a literal of the
// column's type, or NULL), whether a row holding it has expired.
func TestExpiry(t *testing.T) {
	datadriven.RunTest(t, "testdata/expiry", func(t *testing.T, d *datadriven.TestData) string {
		if d.Cmd != "expiry" {
			t.Fatalf("unknown command %q", d.Cmd)
		}
		var typName, ival, unit, nowText string
		d.ScanArgs(t, "type", &typName)
		d.ScanArgs(t, "interval", &ival)
		d.ScanArgs(t, "now", &nowText)
		if d.HasArg("unit") {
			d.ScanArgs(t, "unit", &unit)
		}
		typ, err := types.ParseTypeName(typName)
		if err != nil {
			t.Fatal(err)
		}
		micros, err := types.ParseInterval(ival)
		if err != nil {
			t.Fatal(err)
		}
		now, err := time.Parse(time.RFC3339Nano, nowText)
		if err != nil {
			t.Fatal(err)
		}
		x := at(0, typ.Family, tablesettings.TTL{Interval: micros, Column: "c", Unit: unit}, now)
		if x == nil {
			return "no expiry\n"
		}
		var b strings.Builder
		for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
			line = strings.TrimSpace(line)
			v := types.NullValue
			if line != "NULL" {
				if v, err = types.Cast(types.NewUnknown(line), typ); err != nil {
					t.Fatalf("%s: %v", line, err)
				}
			}
			state := "live"
			if x.Expired([]types.Value{v}) {
				state = "expired"
			}
			fmt.Fprintf(&b, "%s %s\n", line, state)
		}
		return b.String()
	})
}
