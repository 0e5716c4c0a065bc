package cli

import (
	"io"

	"github.com/kubegap/kubegap/internal/library"
	"github.com/kubegap/kubegap/internal/report"
	"github.com/kubegap/kubegap/internal/web"
)

// writeHTMLReport is 'audit -o html': one self-contained page. A library
// that fails to load only loses the case titles and the cited-case
// appendix; the findings still render.
func writeHTMLReport(w io.Writer, rep *report.Report) error {
	lib, _ := library.Default()
	return web.WriteReportHTML(w, rep, lib)
}
