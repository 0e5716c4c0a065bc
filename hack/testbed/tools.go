//go:build tools

// Package testbed pins the kube-apiserver command so that go mod tidy keeps
// everything it needs to build.
package testbed

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
