package cli

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kubegap/kubegap/internal/library"
)

// TestNoCutInAPipe: -o summary, cases list and checks list keep every
// row whole when stdout is not a terminal (kubectl never truncates in a
// pipe); at an 80-column terminal no line passes 80 and no title is cut,
// a long one wraps under its column instead.
func TestNoCutInAPipe(t *testing.T) {
	lib, err := library.Default()
	if err != nil {
		t.Fatal(err)
	}
	var longest string
	for _, c := range lib.Cases() {
		if len(c.Title) > len(longest) {
			longest = c.Title
		}
	}
	if len(longest) < 80 {
		t.Fatalf("no case title longer than 80 columns to test with (longest %q)", longest)
	}
	for _, args := range [][]string{{"cases", "list", "--limit", "1000"}, {"checks", "list"}, {"audit", "--demo", "-o", "summary"}} {
		_, pipe, _ := runWith(t, &App{}, args...)
		_, term, _ := runWith(t, &App{OutIsTerminal: true, OutWidth: 80}, args...)
		if strings.Contains(pipe, "…") {
			t.Errorf("%v in a pipe cuts a row:\n%s", args, pipe)
		}
		wide := 0
		for _, l := range strings.Split(pipe, "\n") {
			wide = max(wide, utf8.RuneCountInString(l))
		}
		if wide <= 80 {
			t.Errorf("%v in a pipe: no row past 80 columns; the test shows nothing", args)
		}
		for _, l := range strings.Split(term, "\n") {
			if n := utf8.RuneCountInString(stripANSI(l)); n > 80 && !strings.Contains(l, "://") {
				t.Errorf("%v at an 80-column terminal: a %d-column line %q", args, n, l)
			}
		}
		if args[0] == "cases" && (!strings.Contains(pipe, longest) || strings.Contains(term, "…")) {
			t.Errorf("cases list: the longest title is not whole in a pipe, or is cut at a terminal")
		}
	}
}

func stripANSI(s string) string {
	for {
		i := strings.Index(s, "\x1b[")
		if i < 0 {
			return s
		}
		j := strings.IndexByte(s[i:], 'm')
		if j < 0 {
			return s
		}
		s = s[:i] + s[i+j+1:]
	}
}
