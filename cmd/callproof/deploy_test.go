package main

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	k8syaml "sigs.k8s.io/yaml"

	"github.com/callproof/callproof/harness"
	"github.com/callproof/callproof/scorer"
)

// deployOnly keeps the deployment tests' suites short: the wiring is what
// they check, not the agent.
const deployOnly = "corr-01,corr-02,int-05,tf-06,corr-09"

// k8sManifests decodes every manifest in deploy/kubernetes strictly (an
// unknown or misspelt field fails) into its k8s.io/api type.
func k8sManifests(t *testing.T) (jobs map[string]*batchv1.Job, pvcs map[string]*corev1.PersistentVolumeClaim) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "deploy", "kubernetes", "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	jobs, pvcs = map[string]*batchv1.Job{}, map[string]*corev1.PersistentVolumeClaim{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		require.NoError(t, k8syaml.Unmarshal(raw, &head), f)
		switch head.APIVersion + " " + head.Kind {
		case "batch/v1 Job":
			var j batchv1.Job
			require.NoError(t, k8syaml.UnmarshalStrict(raw, &j), f)
			jobs[j.Name] = &j
		case "v1 PersistentVolumeClaim":
			var p corev1.PersistentVolumeClaim
			require.NoError(t, k8syaml.UnmarshalStrict(raw, &p), f)
			pvcs[p.Name] = &p
		default:
			t.Fatalf("%s: unexpected %s %s", f, head.APIVersion, head.Kind)
		}
	}
	return jobs, pvcs
}

// k8sVar is a $(VAR) reference in a container's args.
var k8sVar = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// expandArgs expands $(VAR) as the kubelet does: a defined variable is
// replaced, an undefined one left as written.
func expandArgs(args []string, env map[string]string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = k8sVar.ReplaceAllStringFunc(a, func(m string) string {
			if v, ok := env[m[2:len(m)-1]]; ok {
				return v
			}
			return m
		})
	}
	return out
}

func containerEnv(c corev1.Container) map[string]string {
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	return env
}

// The Indexed Job, its volume and the merge-and-gate Job fit together, and
// their entrypoints, run here with each completion index in turn, give the
// same verdicts and gate as one process running the suite.
func TestKubernetesIndexedJob(t *testing.T) {
	jobs, pvcs := k8sManifests(t)
	suite, merge := jobs["callproof-suite"], jobs["callproof-merge-gate"]
	require.NotNil(t, suite, "deploy/kubernetes has the callproof-suite Job")
	require.NotNil(t, merge, "deploy/kubernetes has the callproof-merge-gate Job")

	spec := suite.Spec
	require.NotNil(t, spec.CompletionMode)
	assert.Equal(t, batchv1.IndexedCompletion, *spec.CompletionMode)
	require.Len(t, spec.Template.Spec.Containers, 1)
	c := spec.Template.Spec.Containers[0]
	env := containerEnv(c)
	n, err := strconv.Atoi(env["SHARDS"])
	require.NoError(t, err, "SHARDS")
	require.NotNil(t, spec.Completions)
	require.NotNil(t, spec.Parallelism)
	assert.EqualValues(t, n, *spec.Completions, "one completion per shard")
	assert.EqualValues(t, n, *spec.Parallelism)
	assert.Equal(t, corev1.RestartPolicyNever, spec.Template.Spec.RestartPolicy)
	i := slices.Index(c.Args, "--shard")
	require.GreaterOrEqual(t, i, 0)
	assert.Equal(t, "$(JOB_COMPLETION_INDEX)/$(SHARDS)", c.Args[i+1])

	// Both Jobs mount the same claim at /results.
	claims := func(j *batchv1.Job) string {
		require.Len(t, j.Spec.Template.Spec.Volumes, 1)
		v := j.Spec.Template.Spec.Volumes[0]
		require.NotNil(t, v.PersistentVolumeClaim)
		return v.PersistentVolumeClaim.ClaimName
	}
	claim := claims(suite)
	assert.Equal(t, claim, claims(merge))
	require.Contains(t, pvcs, claim)
	assert.Contains(t, pvcs[claim].Spec.AccessModes, corev1.ReadWriteMany, "every shard's pod mounts it at once")
	for _, m := range append(c.VolumeMounts, merge.Spec.Template.Spec.InitContainers[0].VolumeMounts...) {
		assert.Equal(t, "/results", m.MountPath)
	}

	// The merge lists every shard's directory, once.
	require.Len(t, merge.Spec.Template.Spec.InitContainers, 1)
	mergeArgs := merge.Spec.Template.Spec.InitContainers[0].Args
	require.Equal(t, "merge", mergeArgs[0])
	var want []string
	for k := range n {
		want = append(want, "/results/shard-"+strconv.Itoa(k))
	}
	assert.Equal(t, want, mergeArgs[len(mergeArgs)-n:])
	gateArgs := merge.Spec.Template.Spec.Containers[0].Args
	require.Equal(t, "gate", gateArgs[0])

	// The entrypoints, here: each index's pod, then the merge and the gate,
	// against a local agent on a shortened suite.
	agent := fxAgent(t, "naive")
	results := t.TempDir()
	local := func(args []string) []string {
		out := make([]string, len(args))
		for i, a := range args {
			out[i] = strings.Replace(a, "/results", results, 1)
		}
		return out
	}
	// The runs place as many trials as the gate asks for.
	trials := gateArgs[slices.Index(gateArgs, "--trials")+1]
	env["AGENT_URL"], env["TRIALS"] = agent, trials
	for k := range n {
		env["JOB_COMPLETION_INDEX"] = strconv.Itoa(k)
		args := append(local(expandArgs(c.Args, env)), "--only", deployOnly, "--scale", "0.25")
		code, _, stderr := fxCLI(t, args...)
		require.Equal(t, exitOK, code, "index %d: %v\n%s", k, args, stderr)
	}
	code, _, stderr := fxCLI(t, local(mergeArgs)...)
	require.Equal(t, exitOK, code, stderr)
	gateCode, _, _ := fxCLI(t, local(gateArgs)...)

	one := t.TempDir()
	code, _, stderr = fxCLI(t, "run", "--agent", agent, "--suite", env["SUITE"], "--trials", trials, "--only", deployOnly, "--scale", "0.25", "--out", one)
	require.Equal(t, exitOK, code, stderr)
	oneGate, _, _ := fxCLI(t, "gate", "--trials", trials, one)
	assertSameRun(t, one, filepath.Join(results, "merged"))
	assert.Equal(t, oneGate, gateCode, "the gate decides as on one process's run")
}

// assertSameRun requires two results directories to hold the same calls
// with the same verdicts.
func assertSameRun(t *testing.T, a, b string) {
	t.Helper()
	verdicts := func(dir string) map[string]string {
		r, err := harness.LoadRun(dir)
		require.NoError(t, err)
		out := map[string]string{}
		for _, s := range scorer.ScoreAll(r.Histories) {
			out[s.Call] = verdictLine(s)
		}
		return out
	}
	assert.Equal(t, verdicts(a), verdicts(b))
}

// verdictLine is a call's verdicts: each axis's, the primary bucket and
// the outcome (findings carry timings that differ from run to run).
func verdictLine(s scorer.CallScore) string {
	var b strings.Builder
	for _, a := range s.Axes {
		fmt.Fprintf(&b, "%s=%s ", a.Axis, a.Verdict)
	}
	fmt.Fprintf(&b, "primary=%s outcome=%s", s.Primary, s.Outcome)
	return b.String()
}

// workflow is the part of a GitHub Actions workflow the test reads.
type workflow struct {
	Env  map[string]string `yaml:"env"`
	Jobs map[string]struct {
		Needs    any `yaml:"needs"`
		Strategy struct {
			Matrix map[string][]int `yaml:"matrix"`
		} `yaml:"strategy"`
		Steps []struct {
			Name string            `yaml:"name"`
			Uses string            `yaml:"uses"`
			Run  string            `yaml:"run"`
			With map[string]string `yaml:"with"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

// shellVar is $VAR or ${VAR} in a run step.
var shellVar = regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?`)

// runStep turns a `bin/callproof …` run step into CLI arguments: the
// matrix value and the workflow's env substituted, quotes dropped.
func runStep(step string, shard int, env map[string]string) []string {
	step = strings.ReplaceAll(step, "${{ matrix.shard }}", strconv.Itoa(shard))
	step = shellVar.ReplaceAllStringFunc(step, func(m string) string {
		return env[strings.Trim(m, "${}")]
	})
	fields := strings.Fields(strings.ReplaceAll(step, `"`, ""))
	if len(fields) == 0 || fields[0] != "bin/callproof" {
		return nil
	}
	return fields[1:]
}

// The matrix workflow runs every shard once and its merge job merges them
// all; its commands, run here, give one process's verdicts.
func TestGitHubActionsShardedWorkflow(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "deploy", "github-actions", "callproof-sharded.yml"))
	require.NoError(t, err)
	var w workflow
	dec := yaml.NewDecoder(strings.NewReader(string(raw)))
	require.NoError(t, dec.Decode(&w))
	n, err := strconv.Atoi(w.Env["SHARDS"])
	require.NoError(t, err, "SHARDS")
	shard, ok := w.Jobs["shard"]
	require.True(t, ok, "a shard job")
	var all []int
	for k := range n {
		all = append(all, k)
	}
	assert.Equal(t, all, shard.Strategy.Matrix["shard"], "the matrix runs shards 0..SHARDS-1")
	merge, ok := w.Jobs["merge"]
	require.True(t, ok, "a merge job")
	assert.Equal(t, "shard", merge.Needs)

	agent := fxAgent(t, "naive")
	env := map[string]string{}
	for k, v := range w.Env {
		env[k] = v
	}
	env["AGENT_URL"], env["TRIALS"] = agent, "1"
	work := t.TempDir()
	inWork := func(args []string) []string {
		for i, a := range args {
			if strings.HasPrefix(a, "shard-") || a == "merged" || strings.HasSuffix(a, ".xml") || strings.HasSuffix(a, ".md") {
				args[i] = filepath.Join(work, a)
			}
		}
		return args
	}
	ran := 0
	for _, k := range shard.Strategy.Matrix["shard"] {
		for _, s := range shard.Steps {
			if args := runStep(s.Run, k, env); len(args) > 0 && args[0] == "run" {
				args = append(inWork(args), "--only", deployOnly, "--scale", "0.25")
				code, _, stderr := fxCLI(t, args...)
				require.Equal(t, exitOK, code, "%v\n%s", args, stderr)
				ran++
			}
		}
	}
	assert.Equal(t, n, ran, "one run step per shard")
	var gateCode int
	var merged bool
	for _, s := range merge.Steps {
		args := runStep(s.Run, -1, env)
		if len(args) == 0 {
			continue
		}
		code, _, stderr := fxCLI(t, inWork(args)...)
		switch args[0] {
		case "merge":
			require.Equal(t, exitOK, code, stderr)
			var dirs []string
			for k := range n {
				dirs = append(dirs, filepath.Join(work, "shard-"+strconv.Itoa(k)))
			}
			assert.Equal(t, dirs, args[len(args)-n:], "the merge takes every shard")
			merged = true
		case "gate":
			gateCode = code
		}
	}
	require.True(t, merged, "the merge job merges")

	one := t.TempDir()
	code, _, stderr := fxCLI(t, "run", "--agent", agent, "--suite", env["SUITE"], "--only", deployOnly, "--scale", "0.25", "--out", one)
	require.Equal(t, exitOK, code, stderr)
	oneGate, _, _ := fxCLI(t, "gate", "--trials", env["TRIALS"], one)
	assertSameRun(t, one, filepath.Join(work, "merged"))
	assert.Equal(t, oneGate, gateCode)
}

// dockerInstruction is one instruction of a Dockerfile: its keyword and
// the rest of its (joined) lines.
type dockerInstruction struct{ op, args string }

// dockerfile reads the repository's Dockerfile: comments dropped,
// continued lines joined.
func dockerfile(t *testing.T) []dockerInstruction {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "Dockerfile"))
	require.NoError(t, err)
	var out []dockerInstruction
	var cur strings.Builder
	for _, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if more, ok := strings.CutSuffix(line, "\\"); ok {
			cur.WriteString(more + " ")
			continue
		}
		cur.WriteString(line)
		op, args, _ := strings.Cut(cur.String(), " ")
		out = append(out, dockerInstruction{strings.ToUpper(op), strings.TrimSpace(args)})
		cur.Reset()
	}
	return out
}

// The image (Dockerfile, for deploy/kubernetes) runs the CLI on
// distroless/static, which has no libc: its build stage must make a static
// binary, the final stage must copy that binary where ENTRYPOINT runs it,
// as a non-root user. No Docker daemon here, so the test runs the build
// stage's own go build command, checks the binary has no ELF interpreter
// and runs it, offline, as the image would.
func TestDockerfileBuildsAStaticEntrypoint(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the whole CLI")
	}
	// A compile (minutes with a cold build cache) that places no call:
	// it runs beside the other parallel tests, whose calls mostly wait.
	t.Parallel()
	ins := dockerfile(t)
	var froms, builds, copies []string
	entry, user := "", ""
	for _, in := range ins {
		switch in.op {
		case "FROM":
			froms = append(froms, in.args)
		case "RUN":
			if strings.Contains(in.args, "go build") {
				builds = append(builds, in.args)
			}
		case "COPY":
			copies = append(copies, in.args)
		case "ENTRYPOINT":
			entry = in.args
		case "USER":
			user = in.args
		}
	}
	require.Len(t, froms, 2, "a build stage and the image")
	assert.True(t, strings.HasPrefix(froms[1], "gcr.io/distroless/static"), "the image is distroless/static: %s", froms[1])
	require.Len(t, builds, 1)
	assert.Contains(t, builds[0], "CGO_ENABLED=0", "no cgo: the image has no libc")
	m := regexp.MustCompile(`-o (\S+) (\./cmd/callproof)$`).FindStringSubmatch(builds[0])
	require.NotNil(t, m, "the build names its output and the CLI: %s", builds[0])
	built := m[1]
	copied := ""
	for _, c := range copies {
		if f := strings.Fields(c); len(f) == 3 && f[0] == "--from=build" && f[1] == built {
			copied = f[2]
		}
	}
	require.NotEmpty(t, copied, "the image copies %s from the build stage", built)
	assert.Equal(t, fmt.Sprintf(`["%s"]`, copied), entry, "ENTRYPOINT runs the binary copied")
	assert.Contains(t, user, "nonroot")

	// The build stage's command, as written, with its output here.
	bin := filepath.Join(t.TempDir(), "callproof")
	cmd := exec.Command("sh", "-c", strings.Replace(builds[0], "-o "+built, "-o "+bin, 1))
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	f, err := elf.Open(bin)
	require.NoError(t, err)
	defer f.Close()
	for _, p := range f.Progs {
		assert.NotEqual(t, elf.PT_INTERP, p.Type, "a static binary has no ELF interpreter")
	}
	libs, err := f.ImportedLibraries()
	require.NoError(t, err)
	assert.Empty(t, libs, "no shared libraries")
	// The entrypoint works with nothing around it: no environment, no
	// network, the built-in packs.
	run := exec.Command(bin, "validate")
	run.Env = []string{}
	out, err = run.CombinedOutput()
	require.NoError(t, err, "%s", out)
}
