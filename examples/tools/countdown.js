// A JavaScript tool that streams progress with onUpdate and honours its abort signal.
export default (api) => ({
  name: "countdown",
  label: "Countdown",
  description: "Counts down from `seconds` to zero, reporting each second.",
  parameters: api.typebox.Type.Object({
    seconds: api.typebox.Type.Integer({ minimum: 1, maximum: 60, description: "Where to start" }),
  }),
  async execute(toolCallId, params, onUpdate, ctx, signal) {
    for (let left = params.seconds; left > 0; left--) {
      signal.throwIfAborted();
      onUpdate?.({
        content: [{ type: "text", text: `${left}…` }],
        details: { left },
        progress: params.seconds - left,
        total: params.seconds,
      });
      await new Promise((resolve, reject) => {
        const timer = setTimeout(resolve, 1000);
        signal.addEventListener("abort", () => { clearTimeout(timer); reject(signal.reason); }, { once: true });
      });
    }
    return { content: [{ type: "text", text: "Lift-off!" }], details: { left: 0 } };
  },
  renderCall: (args) => `countdown from ${args.seconds}`,
  renderResult: (result, options) => options.isPartial ? `… ${result.details?.left}` : result.content[0].text,
});
