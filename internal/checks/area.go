package checks

import (
	"reflect"
	"runtime"
	"strings"

	"github.com/kubegap/kubegap/internal/check"
)

// Area names the area of check c: the package under internal/checks that
// defines it (storage, dns, versions...). Reports use it as a result's
// category.
func Area(c check.Check) string {
	if c.Run == nil {
		return ""
	}
	fn := runtime.FuncForPC(reflect.ValueOf(c.Run).Pointer())
	if fn == nil {
		return ""
	}
	// "github.com/kubegap/kubegap/internal/checks/storage.attachLimit.func1"
	const prefix = "/internal/checks/"
	name := fn.Name()
	i := strings.Index(name, prefix)
	if i < 0 {
		return ""
	}
	pkg, _, _ := strings.Cut(name[i+len(prefix):], ".")
	return pkg
}

// AreaOf is Area by check ID ("" for an ID no check has).
func AreaOf(id string) string {
	if c, ok := Lookup(id); ok {
		return Area(c)
	}
	return ""
}
