// Package library holds kubegap's incident library as data: one YAML file
// per case under cases/, and the facets in taxonomy.yaml. It only embeds the
// files; internal/library loads, validates and queries them.
package library

import "embed"

// FS holds cases/*.yaml and taxonomy.yaml, with the same layout as this
// directory, so internal/library.Load reads it exactly as it reads the
// directory on disk.
//
//go:embed cases/*.yaml taxonomy.yaml
var FS embed.FS
