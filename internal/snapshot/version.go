package snapshot

import (
	json "github.com/go-json-experiment/json"
)

// kubectlVersion is the shape `kubectl version -o json` prints: no kind,
// the client's version and, when the server answered, the server's.
type kubectlVersion struct {
	ClientVersion *struct {
		GitVersion string `json:"gitVersion"`
	} `json:"clientVersion"`
	ServerVersion *struct {
		GitVersion string `json:"gitVersion"`
	} `json:"serverVersion"`
}

// addVersion reads a document without kind or apiVersion as `kubectl
// version -o json` output when it has that shape, wherever it is in the
// input: the server's version becomes the source's. ok is false for any
// other document, which is then read (and refused) as an object.
func (l *loader) addVersion(raw []byte) (ok bool, err error) {
	var v kubectlVersion
	if json.Unmarshal(raw, &v) != nil || v.ClientVersion == nil && v.ServerVersion == nil {
		return false, nil
	}
	if v.ServerVersion == nil || v.ServerVersion.GitVersion == "" {
		l.opts.warn(Warning{File: l.file, Message: "kubectl version output without serverVersion (kubectl did not reach the server): it gives no server version"})
		return true, nil
	}
	l.setServerVersion(v.ServerVersion.GitVersion)
	return true, nil
}

// setServerVersion records the server's version; a second, different one
// is reported, and the first kept.
func (l *loader) setServerVersion(v string) {
	switch prev := l.snap.Source.ServerVersion; {
	case prev == "":
		l.snap.Source.ServerVersion = v
	case prev != v:
		l.opts.warn(Warning{File: l.file, Message: "server version " + v + " differs from " + prev +
			", read earlier in the input: " + prev + " is kept (are these files from two clusters?)"})
	}
}
