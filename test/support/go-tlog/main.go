// go-tlog: the independent check for Timekeeper's transparency-log code (lib/tlog/).
//
// It reads a JSON array of requests on stdin and writes a JSON array of results on stdout,
// using Go's own golang.org/x/mod/sumdb/note and golang.org/x/mod/sumdb/tlog, and
// github.com/transparency-dev/formats for cosignature/v1 and checkpoint parsing. The tests
// (test/integration/tlog-go-crosscheck.test.ts) build it with the machine's Go from the module
// proxy and compare its answers with the TypeScript code, both ways.
package main

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	tdlog "github.com/transparency-dev/formats/log"
	tdnote "github.com/transparency-dev/formats/note"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

type request struct {
	Op string `json:"op"`
	// generate_key, cosign
	Name string `json:"name,omitempty"`
	// sign_note, cosign
	Text string `json:"text,omitempty"`
	SKey string `json:"skey,omitempty"`
	// open_note, parse_checkpoint
	Note         string   `json:"note,omitempty"`
	LogKeys      []string `json:"log_keys,omitempty"`
	CosignerKeys []string `json:"cosigner_keys,omitempty"`
	Origin       string   `json:"origin,omitempty"`
	// tree
	Leaves      []string     `json:"leaves,omitempty"`
	Sizes       []int64      `json:"sizes,omitempty"`
	Inclusion   []inclusion  `json:"inclusion,omitempty"`
	Consistency []consistent `json:"consistency,omitempty"`
	// check_inclusion, check_consistency
	LeafHash string   `json:"leaf_hash,omitempty"`
	Index    int64    `json:"index,omitempty"`
	Size     int64    `json:"size,omitempty"`
	From     int64    `json:"from,omitempty"`
	To       int64    `json:"to,omitempty"`
	Root     string   `json:"root,omitempty"`
	OldRoot  string   `json:"old_root,omitempty"`
	Hashes   []string `json:"hashes,omitempty"`
}

type inclusion struct {
	Index int64 `json:"index"`
	Size  int64 `json:"size"`
}

type consistent struct {
	From int64 `json:"from"`
	To   int64 `json:"to"`
}

type sig struct {
	Name      string `json:"name"`
	KeyID     string `json:"key_id"`
	Timestamp int64  `json:"timestamp,omitempty"`
}

func main() {
	var reqs []request
	if err := json.NewDecoder(os.Stdin).Decode(&reqs); err != nil {
		fmt.Fprintln(os.Stderr, "bad input:", err)
		os.Exit(2)
	}
	out := make([]map[string]any, len(reqs))
	for i, r := range reqs {
		res, err := handle(r)
		if err != nil {
			res = map[string]any{"ok": false, "error": err.Error()}
		} else {
			res["ok"] = true
		}
		out[i] = res
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		os.Exit(1)
	}
}

func handle(r request) (map[string]any, error) {
	switch r.Op {
	case "generate_key":
		skey, vkey, err := note.GenerateKey(rand.Reader, r.Name)
		if err != nil {
			return nil, err
		}
		return map[string]any{"skey": skey, "vkey": vkey}, nil
	case "sign_note":
		s, err := note.NewSigner(r.SKey)
		if err != nil {
			return nil, err
		}
		msg, err := note.Sign(&note.Note{Text: r.Text}, s)
		if err != nil {
			return nil, err
		}
		return map[string]any{"note": string(msg)}, nil
	case "cosign":
		// A cosignature/v1 over the checkpoint text from an Ed25519 signer key.
		s, err := tdnote.NewSignerForCosignatureV1(asEd25519SignerKey(r.SKey))
		if err != nil {
			return nil, err
		}
		msg, err := note.Sign(&note.Note{Text: r.Text}, s)
		if err != nil {
			return nil, err
		}
		vkey := s.Verifier()
		return map[string]any{"note": string(msg), "key_id": fmt.Sprintf("%08x", vkey.KeyHash())}, nil
	case "open_note":
		vs, err := verifiers(r.LogKeys, r.CosignerKeys)
		if err != nil {
			return nil, err
		}
		n, err := note.Open([]byte(r.Note), note.VerifierList(vs...))
		if err != nil {
			return nil, err
		}
		return map[string]any{"text": n.Text, "sigs": sigs(n.Sigs, r.CosignerKeys), "unverified": len(n.UnverifiedSigs)}, nil
	case "parse_checkpoint":
		if len(r.LogKeys) != 1 {
			return nil, errors.New("parse_checkpoint needs exactly one log key")
		}
		logV, err := note.NewVerifier(r.LogKeys[0])
		if err != nil {
			return nil, err
		}
		others, err := verifiers(nil, r.CosignerKeys)
		if err != nil {
			return nil, err
		}
		cp, rest, n, err := tdlog.ParseCheckpoint([]byte(r.Note), r.Origin, logV, others...)
		if err != nil {
			return nil, err
		}
		return map[string]any{"origin": cp.Origin, "size": cp.Size, "root": base64.StdEncoding.EncodeToString(cp.Hash),
			"rest": string(rest), "sigs": sigs(n.Sigs, r.CosignerKeys)}, nil
	case "tree":
		return tree(r)
	case "check_inclusion", "check_consistency":
		// hashes: the first hash (leaf or old root), the root, then the proof.
		hs, err := hashes(append([]string{r.LeafHash + r.OldRoot, r.Root}, r.Hashes...))
		if err != nil {
			return nil, err
		}
		if r.Op == "check_inclusion" {
			err = tlog.CheckRecord(tlog.RecordProof(hs[2:]), r.Size, hs[1], r.Index, hs[0])
		} else {
			err = tlog.CheckTree(tlog.TreeProof(hs[2:]), r.To, hs[1], r.From, hs[0])
		}
		if err != nil {
			return nil, err
		}
		return map[string]any{}, nil
	}
	return nil, fmt.Errorf("unknown op %q", r.Op)
}

// verifiers: log keys are plain Ed25519 note keys (type 0x01), cosigner keys are
// cosignature/v1 keys (type 0x04), checked by transparency-dev's implementation.
func verifiers(logKeys, cosignerKeys []string) ([]note.Verifier, error) {
	var vs []note.Verifier
	for _, k := range logKeys {
		v, err := note.NewVerifier(k)
		if err != nil {
			return nil, fmt.Errorf("log key %q: %w", k, err)
		}
		vs = append(vs, v)
	}
	for _, k := range cosignerKeys {
		v, err := tdnote.NewVerifierForCosignatureV1(k)
		if err != nil {
			return nil, fmt.Errorf("cosigner key %q: %w", k, err)
		}
		vs = append(vs, v)
	}
	return vs, nil
}

func sigs(ss []note.Signature, cosignerKeys []string) []sig {
	out := []sig{}
	for _, s := range ss {
		e := sig{Name: s.Name, KeyID: fmt.Sprintf("%08x", s.Hash)}
		if ts, err := tdnote.CoSigV1Timestamp(s); err == nil && isCosigner(s, cosignerKeys) {
			e.Timestamp = ts.Unix()
		}
		out = append(out, e)
	}
	return out
}

func isCosigner(s note.Signature, cosignerKeys []string) bool {
	for _, k := range cosignerKeys {
		v, err := tdnote.NewVerifierForCosignatureV1(k)
		if err == nil && v.Name() == s.Name && v.KeyHash() == s.Hash {
			return true
		}
	}
	return false
}

// tree builds an in-memory tlog over the leaves (each base64 leaf data) and answers roots,
// leaf hashes, inclusion and consistency proofs.
func tree(r request) (map[string]any, error) {
	var stored []tlog.Hash
	reader := tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(idx))
		for i, x := range idx {
			if x < 0 || x >= int64(len(stored)) {
				return nil, fmt.Errorf("hash index %d out of range", x)
			}
			out[i] = stored[x]
		}
		return out, nil
	})
	leafHashes := make([]string, len(r.Leaves))
	for i, l := range r.Leaves {
		data, err := base64.StdEncoding.DecodeString(l)
		if err != nil {
			return nil, fmt.Errorf("leaf %d: %w", i, err)
		}
		leafHashes[i] = tlog.RecordHash(data).String()
		hs, err := tlog.StoredHashes(int64(i), data, reader)
		if err != nil {
			return nil, err
		}
		stored = append(stored, hs...)
	}
	roots := map[string]string{}
	for _, n := range r.Sizes {
		h, err := tlog.TreeHash(n, reader)
		if err != nil {
			return nil, err
		}
		roots[fmt.Sprint(n)] = h.String()
	}
	inc := make([][]string, len(r.Inclusion))
	for i, q := range r.Inclusion {
		p, err := tlog.ProveRecord(q.Size, q.Index, reader)
		if err != nil {
			return nil, err
		}
		inc[i] = strs(p)
	}
	cons := make([][]string, len(r.Consistency))
	for i, q := range r.Consistency {
		p, err := tlog.ProveTree(q.To, q.From, reader)
		if err != nil {
			return nil, err
		}
		cons[i] = strs(p)
	}
	return map[string]any{"leaf_hashes": leafHashes, "roots": roots, "inclusion": inc, "consistency": cons}, nil
}

func strs(hs []tlog.Hash) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.String()
	}
	return out
}

// asEd25519SignerKey rewrites a cosignature/v1 signer key (type 0x04) into the plain Ed25519
// encoding (type 0x01) that transparency-dev/formats v0.1.0 reads; the seed is the same and
// the library derives the 0x04 key id itself.
func asEd25519SignerKey(skey string) string {
	prefix, key64, found := cutLast(skey, "+")
	key, err := base64.StdEncoding.DecodeString(key64)
	if !found || err != nil || len(key) == 0 || key[0] != 0x04 {
		return skey
	}
	key[0] = 0x01
	return prefix + "+" + base64.StdEncoding.EncodeToString(key)
}

// cutLast splits at the 4th '+' of a PRIVATE+KEY+name+hash+key string (the key may hold '+').
func cutLast(s, sep string) (string, string, bool) {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] == sep[0] {
			n++
			if n == 4 {
				return s[:i], s[i+1:], true
			}
		}
	}
	return "", "", false
}

func hashes(ss []string) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(ss))
	for i, s := range ss {
		h, err := tlog.ParseHash(s)
		if err != nil {
			return nil, err
		}
		out[i] = h
	}
	return out, nil
}
