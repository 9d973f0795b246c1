package console

import (
	"fmt"
	"html/template"
	"strings"
	"time"
)

// chart draws the splits and merges of the samples as an SVG line chart:
// the cumulative counts over time (a step up is a split or merge in that
// interval), and the shard count, each scaled to the tallest line.
func chart(samples []sample) template.HTML {
	const w, h, left, right, top, bottom = 720.0, 220.0, 48.0, 16.0, 16.0, 36.0
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 %g %g" width="%g" height="%g" role="img" aria-label="splits and merges over time">`, w, h, w, h)
	if len(samples) < 2 {
		fmt.Fprintf(&b, `<text x="%g" y="%g" class="empty">collecting samples: the chart starts after the second one</text></svg>`, left, h/2)
		return template.HTML(b.String())
	}
	t0, t1 := samples[0].At, samples[len(samples)-1].At
	span := t1.Sub(t0).Seconds()
	if span <= 0 {
		span = 1
	}
	var maxY int64 = 1
	base := samples[0]
	for _, s := range samples {
		maxY = max(maxY, s.Splits-base.Splits, s.Merges-base.Merges, int64(s.Shards))
	}
	x := func(t time.Time) float64 { return left + (w-left-right)*t.Sub(t0).Seconds()/span }
	y := func(v int64) float64 { return top + (h-top-bottom)*(1-float64(v)/float64(maxY)) }
	// Axes and grid.
	fmt.Fprintf(&b, `<line class="axis" x1="%g" y1="%g" x2="%g" y2="%g"/>`, left, y(0), w-right, y(0))
	fmt.Fprintf(&b, `<line class="axis" x1="%g" y1="%g" x2="%g" y2="%g"/>`, left, top, left, y(0))
	for _, v := range []int64{0, maxY / 2, maxY} {
		fmt.Fprintf(&b, `<text class="tick" x="%g" y="%g" text-anchor="end">%d</text>`, left-6, y(v)+4, v)
	}
	fmt.Fprintf(&b, `<text class="tick" x="%g" y="%g">%s</text>`, left, h-12, t0.Format("15:04:05"))
	fmt.Fprintf(&b, `<text class="tick" x="%g" y="%g" text-anchor="end">%s</text>`, w-right, h-12, t1.Format("15:04:05 UTC"))
	line := func(class string, v func(sample) int64) {
		var pts []string
		for _, s := range samples {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(s.At), y(v(s))))
		}
		fmt.Fprintf(&b, `<polyline class="%s" points="%s"/>`, class, strings.Join(pts, " "))
	}
	line("shards", func(s sample) int64 { return int64(s.Shards) })
	line("splits", func(s sample) int64 { return s.Splits - base.Splits })
	line("merges", func(s sample) int64 { return s.Merges - base.Merges })
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}
