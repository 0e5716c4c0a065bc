package textwrap

import (
	"strings"
	"testing"
)

func TestWrap(t *testing.T) {
	tests := []struct {
		text  string
		width int
		want  []string
	}{
		{"", 10, nil},
		{"one two three", 7, []string{"one two", "three"}},
		{"a https://example.com/very/long b", 10, []string{"a", "https://example.com/very/long", "b"}},
		{"  spaced   out  ", 20, []string{"spaced out"}},
	}
	for _, tt := range tests {
		got := Wrap(tt.text, tt.width)
		if strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("Wrap(%q, %d) = %q, want %q", tt.text, tt.width, got, tt.want)
		}
	}
}
