package ha

import "path"

// keys is the etcd layout of one cluster (see the package doc).
type keys struct{ root string }

func newKeys(clusterID string) keys { return keys{root: path.Join("/flinkgo", clusterID) + "/"} }

func (k keys) members() string           { return k.root + "members/" }
func (k keys) member(name string) string { return k.members() + name }
func (k keys) jobs() string              { return k.root + "jobs/" }
func (k keys) job(id string) string      { return k.jobs() + id }
func (k keys) owners() string            { return k.root + "owners/" }
func (k keys) election(id string) string { return k.owners() + id }
func (k keys) token() string             { return k.root + "token" }
