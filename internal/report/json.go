package report

import (
	"encoding/json"
	"io"
)

// WriteJSON writes the report in the JSON contract, indented.
func WriteJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
