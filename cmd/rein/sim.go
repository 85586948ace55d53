package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/reinhq/rein/internal/provider/sim"
	"github.com/spf13/cobra"
)

func newSimCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sim",
		Short: "The provider simulator (a real HTTP server speaking the providers' wire formats)",
	}
	cmd.AddCommand(newSimServeCmd())
	return cmd
}

func newSimServeCmd() *cobra.Command {
	var addr, script string
	var delay time.Duration
	var limit int
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the simulator until interrupted",
		Long: `serve runs rein's provider simulator: Anthropic Messages (/v1/messages), OpenAI Chat
Completions (/v1/chat/completions) and Responses (/v1/responses), all streaming. It
validates every request with the providers' rules and answers a violation with the
provider's own 400 error. Without a script it plays a simple deterministic policy; it
is a simulator, never a model.`,
		Example: `  rein sim serve --addr 127.0.0.1:0
  rein run --provider anthropic --base-url http://127.0.0.1:PORT "hello"   (any key)`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts := sim.Options{Delay: delay, ContextLimit: limit}
			if script != "" {
				s, err := sim.LoadScript(script)
				if err != nil {
					return exitf(exitUsage, "%v", err)
				}
				opts.Script = s
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return sim.New(opts).ListenAndServe(ctx, addr, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:0", "the address to listen on (port 0 picks one)")
	cmd.Flags().StringVar(&script, "script", "", "a JSON script to play before the default policy")
	cmd.Flags().DurationVar(&delay, "delay", 0, "the delay between streamed chunks")
	cmd.Flags().IntVar(&limit, "context-limit", 0, "refuse requests over this many estimated tokens with the provider's context error")
	return cmd
}
