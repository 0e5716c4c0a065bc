// Package demo holds kubegap's embedded demo cluster: an AKS-like cluster
// caught mid-upgrade that carries the gaps of the four founding cases, so a
// new user sees real findings with no cluster at hand.
package demo

import (
	"embed"
	"io/fs"

	"github.com/kubegap/kubegap/internal/snapshot"
)

//go:embed cluster/*.yaml
var files embed.FS

// ServerVersion is what the demo cluster's API server would report.
const ServerVersion = "v1.35.4"

// Snapshot loads the demo cluster through the same loader as --from.
func Snapshot() (*snapshot.Snapshot, error) {
	names, err := fs.Glob(files, "cluster/*.yaml")
	if err != nil {
		return nil, err
	}
	s, err := snapshot.LoadFS(files, snapshot.Source{Type: snapshot.SourceDemo, Context: "contoso-prod (demo)"}, names)
	if err != nil {
		return nil, err
	}
	s.Source.ServerVersion = ServerVersion
	// The demo stands for a whole cluster read live: what it does not
	// hold does not exist, rather than "not in the input".
	for _, r := range snapshot.Known() {
		s.SetCoverage(r, snapshot.StatusRead, "")
		s.SetComplete(r, nil)
	}
	return s, nil
}
