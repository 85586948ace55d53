// working.js is the one working rule (DESIGN §12.4), the same as api.Working in
// internal/api/state.go: an exchange in flight, or a submission accepted or delivered and not yet
// terminal. The chat computes it from its own copy of the conversation state, which every record
// event carries, so the button and the sidebar cannot disagree for longer than one event.
export function working(state) {
  if (!state) return false;
  if (state.in_flight) return true;
  return (state.submissions || []).some((s) => s.state === "accepted" || s.state === "delivered");
}

// canStop is when the composer shows Stop: the conversation is working, or this browser's outbox
// holds a message for it that will still go out on its own (or has been acknowledged and not yet
// seen in the stream). A message waiting on its Retry does not count: Stop never replaces Send
// for it and never removes it. Against a host that does not advertise conversation-stop.v1, a
// Stop must name a running turn, so only an exchange in flight counts.
export function canStop(state, pending, conversationStop) {
  if (!conversationStop) return !!(state && state.in_flight);
  return working(state) || pending > 0;
}
