//go:build tools

// Package testbed pins the kube-apiserver and kubectl commands so that go
// mod tidy keeps everything they need to build. kubectl makes the dumps the
// recipe test audits: the real client, not an imitation of its output.
package testbed

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
