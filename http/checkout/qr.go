package checkout

import (
	"bytes"
	"fmt"

	qrcode "github.com/skip2/go-qrcode"
)

// QRSVG draws text (a deposit address) as a QR code in SVG: one path of
// the runs of dark modules on a white square, with the standard quiet zone
// of four modules, scaled by the viewer. Medium error correction (15%).
func QRSVG(text string) ([]byte, error) {
	q, err := qrcode.New(text, qrcode.Medium)
	if err != nil {
		return nil, err
	}
	bits := q.Bitmap() // includes the quiet zone
	n := len(bits)
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" shape-rendering="crispEdges">`, n, n)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#fff"/><path fill="#000" d="`, n, n)
	for y, row := range bits {
		for x := 0; x < len(row); {
			if !row[x] {
				x++
				continue
			}
			run := 1
			for x+run < len(row) && row[x+run] {
				run++
			}
			fmt.Fprintf(&b, "M%d %dh%dv1h-%dz", x, y, run, run)
			x += run
		}
	}
	b.WriteString(`"/></svg>`)
	return b.Bytes(), nil
}
