package scenarios

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
)

//go:embed packs
var packFiles embed.FS

// PackNames lists the built-in packs.
func PackNames() []string {
	entries, err := fs.ReadDir(packFiles, "packs")
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names
}

// Pack loads a built-in pack by name. Scenarios come in file order; error
// and File names read "core/corr-02.yaml".
func Pack(name string) ([]*Scenario, error) {
	sub, err := fs.Sub(packFiles, "packs")
	if err != nil {
		return nil, err
	}
	if _, err := fs.Stat(sub, name); err != nil || name == "." || path.Base(name) != name {
		return nil, fmt.Errorf("scenarios: no built-in pack %q (have %v)", name, PackNames())
	}
	return LoadFS(sub, name)
}

// PackFS returns the built-in pack files (paths "core/corr-01.yaml", ...),
// for tools that want the raw files.
func PackFS() fs.FS {
	sub, _ := fs.Sub(packFiles, "packs")
	return sub
}
