// A tool that runs a program with api.exec: the deny list, the same permissions as Bash, the
// process helper's timeout and the call's signal all apply.
import { Type, type Static } from "@sinclair/typebox";

const Params = Type.Object({
  pattern: Type.Optional(Type.String({ default: "*.ts", description: "A git pathspec" })),
});

export default (api: any) => ({
  name: "git_files",
  label: "Git files",
  description: "Lists the files git tracks that match `pattern` (default *.ts).",
  parameters: Params,
  async execute(_id: string, params: Static<typeof Params>, onUpdate: any, _ctx: unknown, signal: AbortSignal) {
    onUpdate?.({ content: [{ type: "text", text: "Asking git…" }] });
    const result = await api.exec("git", ["ls-files", "--", params.pattern ?? "*.ts"], { signal, cwd: api.cwd, timeout: 30_000 });
    if (result.killed) throw new Error("git was stopped (cancelled or timed out)");
    if (result.code !== 0) throw new Error(result.stderr || `git exited with ${result.code}`);
    const files = result.stdout.split("\n").filter(Boolean);
    return {
      content: [{ type: "text", text: files.length ? `${files.length} files:\n${files.join("\n")}` : "No files match." }],
      details: { count: files.length, sample: files.slice(0, 10) },
    };
  },
});
