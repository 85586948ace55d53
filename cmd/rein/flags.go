package main

import (
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/pflag"
)

// numberRange is the range of one numeric flag (or config key).
type numberRange struct {
	flag string // the flag's name
	key  string // the config file's key, if it has one
	min  int64
	hint string // what to do instead, when the obvious mistake has a way out
}

// numberRanges are rein's numeric flags and what they accept. A flag left out keeps its default;
// one given must be in range.
var numberRanges = []numberRange{
	{flag: "max-turns", key: "max_turns", min: 1},
	{flag: "max-tokens", key: "max_tokens", min: 1},
	{flag: "context-window", key: "context_window", min: 1, hint: "leave it out to use the model's known window"},
	{flag: "sim-delay", min: 0},
	{flag: "delay", min: 0},
	{flag: "context-limit", min: 0, hint: "0 means no limit"},
	{flag: "at", min: 0, hint: "0 means every turn"},
	{flag: "max-children", key: "max_children", min: 0, hint: "0 turns the agents tool off"},
	{flag: "max-children-total", key: "max_children_total", min: 0, hint: "0 turns the agents tool off"},
}

// checkNumbers refuses a numeric flag given out of its range, saying the range (a usage error,
// exit 2). Negative durations, turn counts and token counts mean nothing, and would otherwise be
// taken silently (a negative --max-turns meant the default).
func checkNumbers(fs *pflag.FlagSet) error {
	for _, nr := range numberRanges {
		fl := fs.Lookup(nr.flag)
		if fl == nil || !fl.Changed {
			continue
		}
		var n int64
		var unit string
		switch fl.Value.Type() {
		case "duration":
			d, err := time.ParseDuration(fl.Value.String())
			if err != nil {
				return exitf(exitUsage, "--%s %s: %v", nr.flag, fl.Value, err)
			}
			n, unit = int64(d), "a duration"
		default:
			v, err := strconv.ParseInt(fl.Value.String(), 10, 64)
			if err != nil {
				return exitf(exitUsage, "--%s %s: %v", nr.flag, fl.Value, err)
			}
			n, unit = v, "a whole number"
		}
		if n < nr.min {
			return exitf(exitUsage, "--%s %s is out of range: %s", nr.flag, fl.Value, nr.want(unit))
		}
	}
	return nil
}

// want says what nr accepts: "it must be a whole number of 1 or more".
func (nr numberRange) want(unit string) string {
	s := fmt.Sprintf("it must be %s of %d or more", unit, nr.min)
	if unit == "a duration" {
		s = "it must be a duration of 0 or more"
	}
	if nr.hint != "" {
		s += "; " + nr.hint
	}
	return s
}

// checkConfigNumbers refuses a config file's numeric key out of its range. defined reports
// whether the file set a key; value is its value.
func checkConfigNumbers(path string, defined func(key string) bool, value func(key string) int64) error {
	for _, nr := range numberRanges {
		if nr.key == "" || !defined(nr.key) {
			continue
		}
		if v := value(nr.key); v < nr.min {
			return fmt.Errorf("the config file %s sets %s = %d, out of range: %s", path, nr.key, v, nr.want("a whole number"))
		}
	}
	return nil
}
