package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
)

// Config is a production deployment's providers: the file given with
// --providers. Secrets are never in it, only where to read them.
//
//	{"providers": [
//	  {"name": "momo_gh", "kind": "mtn_momo",
//	   "methods": [{"code": "gh_mtn", "directions": ["payouts", "collections"]}],
//	   "settings": {"baseUrl": "https://…", "targetEnvironment": "mtnghana"},
//	   "secrets": {"apiKey": {"file": "/etc/payments/momo.key"}, "subscriptionKey": {"env": "MOMO_SUB_KEY"}}}
//	]}
type Config struct {
	Providers []InstanceConfig `json:"providers"`
}

// InstanceConfig is one provider instance.
type InstanceConfig struct {
	// Name is unique in the deployment: its callbacks arrive on
	// /v1/providers/{name}/callbacks and its float accounts carry it.
	Name     string                  `json:"name"`
	Kind     string                  `json:"kind"` // the adapter: "evm", "mtn_momo", "mpesa", …
	Methods  []MethodConfig          `json:"methods"`
	Settings json.RawMessage         `json:"settings"`
	Secrets  map[string]SecretSource `json:"secrets"`
}

// MethodConfig is a method code the instance serves, and which ways.
type MethodConfig struct {
	Code       string   `json:"code"`
	Directions []string `json:"directions"` // "payouts", "collections", "deposits"
}

// SecretSource says where a secret is read from: a file (its content,
// trailing newlines trimmed) or an environment variable.
type SecretSource struct {
	File string `json:"file"`
	Env  string `json:"env"`
}

// Secret is a credential. It prints as [secret], so it cannot reach a log
// line or an error by accident; Reveal gives the value to the adapter.
type Secret struct{ v string }

func NewSecret(v string) Secret             { return Secret{v} }
func (s Secret) Reveal() string             { return s.v }
func (s Secret) String() string             { return "[secret]" }
func (s Secret) GoString() string           { return "[secret]" }
func (s Secret) IsZero() bool               { return s.v == "" }
func (s Secret) Format(f fmt.State, _ rune) { f.Write([]byte("[secret]")) }

// Secrets are an instance's credentials by name.
type Secrets map[string]Secret

// Get returns the secret name, or an error naming what is missing.
func (s Secrets) Get(name string) (Secret, error) {
	v, ok := s[name]
	if !ok || v.IsZero() {
		return Secret{}, fmt.Errorf("provider: secret %q is not configured", name)
	}
	return v, nil
}

// Factory builds an adapter from its instance's settings and secrets. The
// value it returns implements the capability interfaces (Payouter,
// Collector, …) of the directions its instance serves.
type Factory func(cfg InstanceConfig, secrets Secrets) (any, error)

// Instance is a configured provider.
type Instance struct {
	Name    string
	Kind    string
	Adapter any
	methods map[string]Direction
}

// Serves reports whether the instance serves method in direction d.
func (in *Instance) Serves(method string, d Direction) bool { return in.methods[method]&d != 0 }

// Methods lists the method codes the instance serves, sorted.
func (in *Instance) Methods() []string {
	codes := make([]string, 0, len(in.methods))
	for c := range in.methods {
		codes = append(codes, c)
	}
	slices.Sort(codes)
	return codes
}

// Registry maps method codes to the instances that serve them: at most one
// instance per method and direction.
type Registry struct {
	instances []*Instance
	byName    map[string]*Instance
	byMethod  map[string]map[Direction]*Instance
}

// ParseConfig reads a providers file; unknown fields are refused, so a
// misspelt key is an error at start, not a method silently unserved.
func ParseConfig(data []byte) (Config, error) {
	var cfg Config
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return Config{}, fmt.Errorf("provider: configuration: %w", err)
	}
	return cfg, nil
}

// Build makes the registry: each instance's secrets are read, its adapter
// built by the factory of its kind, and checked to implement what its
// methods' directions need.
func Build(cfg Config, factories map[string]Factory, getenv func(string) string) (*Registry, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	r := &Registry{byName: map[string]*Instance{}, byMethod: map[string]map[Direction]*Instance{}}
	for i, ic := range cfg.Providers {
		where := fmt.Sprintf("provider %d (%q)", i, ic.Name)
		if ic.Name == "" || strings.ContainsAny(ic.Name, "/ ?#%") {
			return nil, fmt.Errorf("%s: a name of letters, digits, - and _ is required", where)
		}
		if _, dup := r.byName[ic.Name]; dup {
			return nil, fmt.Errorf("%s: the name is used twice", where)
		}
		factory, ok := factories[ic.Kind]
		if !ok {
			return nil, fmt.Errorf("%s: unknown kind %q", where, ic.Kind)
		}
		secrets, err := readSecrets(ic.Secrets, getenv)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		adapter, err := factory(ic, secrets)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		in := &Instance{Name: ic.Name, Kind: ic.Kind, Adapter: adapter, methods: map[string]Direction{}}
		for _, m := range ic.Methods {
			var d Direction
			for _, name := range m.Directions {
				dir, ok := parseDirection(name)
				if !ok {
					return nil, fmt.Errorf("%s: method %s: unknown direction %q (payouts, collections, deposits)", where, m.Code, name)
				}
				if err := implements(adapter, dir); err != nil {
					return nil, fmt.Errorf("%s: method %s: %w", where, m.Code, err)
				}
				d |= dir
			}
			if m.Code == "" || d == 0 {
				return nil, fmt.Errorf("%s: each method needs a code and at least one direction", where)
			}
			for _, dir := range []Direction{Payouts, Collections, Deposits} {
				if d&dir == 0 {
					continue
				}
				if other := r.byMethod[m.Code][dir]; other != nil {
					return nil, fmt.Errorf("%s: method %s is already served that way by %q", where, m.Code, other.Name)
				}
				if r.byMethod[m.Code] == nil {
					r.byMethod[m.Code] = map[Direction]*Instance{}
				}
				r.byMethod[m.Code][dir] = in
			}
			in.methods[m.Code] |= d
		}
		r.instances = append(r.instances, in)
		r.byName[in.Name] = in
	}
	return r, nil
}

func parseDirection(s string) (Direction, bool) {
	switch s {
	case "payouts":
		return Payouts, true
	case "collections":
		return Collections, true
	case "deposits":
		return Deposits, true
	}
	return 0, false
}

func implements(adapter any, d Direction) error {
	var ok bool
	var need string
	switch d {
	case Payouts:
		_, ok = adapter.(Payouter)
		need = "payouts"
	case Collections:
		_, ok = adapter.(Collector)
		need = "collections"
	case Deposits:
		_, p := adapter.(DepositProvisioner)
		_, f := adapter.(DepositFeed)
		ok = p && f
		need = "deposits (provisioning and a feed)"
	}
	if !ok {
		return fmt.Errorf("the adapter does not do %s", need)
	}
	return nil
}

func readSecrets(src map[string]SecretSource, getenv func(string) string) (Secrets, error) {
	out := Secrets{}
	for name, s := range src {
		switch {
		case s.File != "" && s.Env != "":
			return nil, fmt.Errorf("secret %q: give a file or an environment variable, not both", name)
		case s.File != "":
			b, err := os.ReadFile(s.File)
			if err != nil {
				return nil, fmt.Errorf("secret %q: %w", name, err)
			}
			out[name] = Secret{strings.TrimRight(string(b), "\r\n")}
		case s.Env != "":
			v := getenv(s.Env)
			if v == "" {
				return nil, fmt.Errorf("secret %q: environment variable %s is empty", name, s.Env)
			}
			out[name] = Secret{v}
		default:
			return nil, fmt.Errorf("secret %q: no source", name)
		}
	}
	return out, nil
}

// Instances lists the configured instances in configuration order.
func (r *Registry) Instances() []*Instance { return r.instances }

// Instance returns the instance called name.
func (r *Registry) Instance(name string) (*Instance, bool) {
	in, ok := r.byName[name]
	return in, ok
}

// For returns the instance serving method in direction d.
func (r *Registry) For(method string, d Direction) (*Instance, bool) {
	in := r.byMethod[method][d]
	return in, in != nil
}

// Serves reports whether some instance serves method in direction d.
func (r *Registry) Serves(method string, d Direction) bool {
	_, ok := r.For(method, d)
	return ok
}

// Payouter returns the adapter that sends payouts by method.
func (r *Registry) Payouter(method string) (Payouter, *Instance, bool) {
	in, ok := r.For(method, Payouts)
	if !ok {
		return nil, nil, false
	}
	return in.Adapter.(Payouter), in, true
}

// Collector returns the adapter that collects by method.
func (r *Registry) Collector(method string) (Collector, *Instance, bool) {
	in, ok := r.For(method, Collections)
	if !ok {
		return nil, nil, false
	}
	return in.Adapter.(Collector), in, true
}

// Provisioner returns the adapter that issues deposit details for method.
func (r *Registry) Provisioner(method string) (DepositProvisioner, *Instance, bool) {
	in, ok := r.For(method, Deposits)
	if !ok {
		return nil, nil, false
	}
	return in.Adapter.(DepositProvisioner), in, true
}
