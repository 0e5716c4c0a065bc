package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
)

// MinorArg is target_version as an agent sends it: a string ("1.36"), or
// a JSON number (1.36), as MCP Inspector's CLI sends target_version=1.36
// after reading it as a JSON scalar. A number is taken as the digits it
// is written with. A JSON number cannot carry a trailing zero, though:
// 1.40 arrives as 1.4, and 1.4 and 1.40 are different minors. So a
// number is accepted only where no zero can have been dropped, with a
// minor of two or more digits not ending in 0 (1.36, 1.29); any other
// number is refused with the string to send instead. Kubernetes has not
// had a one-digit minor since 1.9 (2017), older than any upgrade target
// kubegap's tables hold.
type MinorArg string

// minorNumber is a number written as MAJOR.MINOR with a minor that cannot
// be a longer one with its trailing zeros dropped.
var minorNumber = regexp.MustCompile(`^[0-9]+\.[0-9]+[1-9]$`)

// UnmarshalJSON reads a string or a number.
func (m *MinorArg) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*m = MinorArg(s)
		return nil
	}
	if bytes.Equal(b, []byte("null")) {
		*m = ""
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("target_version: want a string such as \"1.36\", got %s", b)
	}
	s := n.String()
	if !minorNumber.MatchString(s) {
		return fmt.Errorf("target_version %s: a JSON number cannot say which minor is meant (it drops trailing zeros: 1.40 arrives as 1.4); pass the version as a string, e.g. \"1.40\" or \"1.36\"", s)
	}
	*m = MinorArg(s)
	return nil
}
