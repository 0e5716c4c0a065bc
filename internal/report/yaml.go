package report

import (
	"encoding/json"
	"io"

	"sigs.k8s.io/yaml"
)

// WriteYAML writes the report as YAML: the JSON contract, field for field,
// as kubectl's -o yaml is its -o json.
func WriteYAML(w io.Writer, r *Report) error {
	j, err := json.Marshal(withPlan(r))
	if err != nil {
		return err
	}
	y, err := yaml.JSONToYAML(j)
	if err != nil {
		return err
	}
	_, err = w.Write(y)
	return err
}
