package main

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// bar is one client's bar: the median over rounds and the rounds' range.
type bar struct {
	client      string
	med, lo, hi float64
}

// group is the bars of one workload, side by side under its label.
type group struct {
	label string
	bars  []bar
}

// chart is one picture: bars per client, grouped by workload, each with a
// min–max whisker.
type chart struct {
	file    string // base name, without .svg/.png
	title   string
	ylabel  string
	groups  []group
	refLine float64 // a dashed horizontal line at this value (0: none)
}

// palette gives each client family the same color in every chart.
var palette = []struct {
	prefix string
	c      color.RGBA
}{
	{"guise", color.RGBA{0x1f, 0x77, 0xb4, 0xff}},
	{"net/http", color.RGBA{0x7f, 0x7f, 0x7f, 0xff}},
	{"fasthttp", color.RGBA{0x2c, 0xa0, 0x2c, 0xff}},
	{"tls-client", color.RGBA{0xd6, 0x27, 0x28, 0xff}},
	{"wreq-js", color.RGBA{0xff, 0x7f, 0x0e, 0xff}},
	{"raw", color.RGBA{0x94, 0x67, 0xbd, 0xff}},
}

func colorOf(client string) color.Color {
	for _, p := range palette {
		if len(client) >= len(p.prefix) && client[:len(p.prefix)] == p.prefix {
			return p.c
		}
	}
	return color.Black
}

// build lays the chart out: bar k of group g at x = g*(widest+1)+k.
func (ch *chart) build() (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = ch.title
	p.Y.Label.Text = ch.ylabel
	p.Y.Min = 0
	p.Legend.Top = true
	p.Legend.Left = false
	widest := 0
	for _, g := range ch.groups {
		widest = max(widest, len(g.bars))
	}
	var ticks []plot.Tick
	var lx plotter.XYs
	var lt []string
	top := 0.0
	inLegend := map[string]bool{}
	for gi, g := range ch.groups {
		x0 := float64(gi * (widest + 1))
		for k, b := range g.bars {
			x := x0 + float64(k)
			bc, err := plotter.NewBarChart(plotter.Values{b.med}, vg.Points(18))
			if err != nil {
				return nil, err
			}
			bc.XMin = x
			bc.Color = colorOf(b.client)
			bc.LineStyle.Width = 0
			p.Add(bc)
			if len(ch.groups) == 1 {
				ticks = append(ticks, plot.Tick{Value: x, Label: b.client})
			} else if !inLegend[b.client] {
				p.Legend.Add(b.client, bc)
				inLegend[b.client] = true
			}
			if b.hi > b.lo {
				eb, err := plotter.NewYErrorBars(whisker{x: x, y: b.med, lo: b.lo, hi: b.hi})
				if err != nil {
					return nil, err
				}
				eb.CapWidth = vg.Points(8)
				eb.LineStyle.Width = vg.Points(1.2)
				p.Add(eb)
			}
			top = max(top, b.hi, b.med)
			lx = append(lx, plotter.XY{X: x, Y: max(b.hi, b.med)})
			lt = append(lt, ch.format(b.med))
		}
		if len(ch.groups) > 1 {
			ticks = append(ticks, plot.Tick{Value: x0 + float64(len(g.bars)-1)/2, Label: g.label})
		}
	}
	labels, err := plotter.NewLabels(plotter.XYLabels{XYs: lx, Labels: lt})
	if err != nil {
		return nil, err
	}
	for i := range labels.TextStyle {
		labels.TextStyle[i].XAlign = draw.XCenter
		labels.TextStyle[i].Font.Size = vg.Points(8)
	}
	labels.Offset = vg.Point{Y: vg.Points(3)}
	p.Add(labels)
	// Headroom above the tallest bar for its label and the legend.
	p.Y.Max = top * 1.12
	if len(ch.groups) > 1 || len(inLegend) > 0 {
		p.Y.Max = top * 1.45
	}
	if ch.refLine > 0 {
		f := plotter.NewFunction(func(float64) float64 { return ch.refLine })
		f.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		f.Color = color.Gray{0x60}
		p.Add(f)
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.X.Min = -0.7
	p.X.Max = float64((len(ch.groups)-1)*(widest+1)+widest-1) + 0.7
	p.Add(plotter.NewGrid())
	return p, nil
}

// format writes a bar's median for its label.
func (ch *chart) format(v float64) string {
	if ch.refLine > 0 {
		return fmt.Sprintf("%.2fx", v)
	}
	return trim(v)
}

// whisker is one min–max error bar, for plotter.NewYErrorBars.
type whisker struct{ x, y, lo, hi float64 }

func (w whisker) Len() int                      { return 1 }
func (w whisker) XY(int) (float64, float64)     { return w.x, w.y }
func (w whisker) YError(int) (float64, float64) { return w.y - w.lo, w.hi - w.y }

// save writes the chart as dir/file.svg and dir/file.png.
func (ch *chart) save(dir string) error {
	p, err := ch.build()
	if err != nil {
		return fmt.Errorf("chart %s: %w", ch.file, err)
	}
	bars := 0
	for _, g := range ch.groups {
		bars += len(g.bars)
	}
	w := vg.Length(max(6.5, 0.5*float64(bars+len(ch.groups)))) * vg.Inch
	if len(ch.groups) == 1 {
		w = vg.Length(max(6.5, 1.3*float64(bars))) * vg.Inch // room for the names
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, ext := range []string{".svg", ".png"} {
		if err := p.Save(w, 3.6*vg.Inch, filepath.Join(dir, ch.file+ext)); err != nil {
			return fmt.Errorf("chart %s%s: %w", ch.file, ext, err)
		}
	}
	return nil
}
