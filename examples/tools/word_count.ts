// A TypeScript tool with TypeBox parameters: counts lines, words and characters of text or of
// a file in the workspace (read through the sandboxed node:fs/promises).
import { Type, type Static } from "@sinclair/typebox";
import { readFile } from "node:fs/promises";

const Params = Type.Object({
  text: Type.Optional(Type.String({ description: "Text to count" })),
  path: Type.Optional(Type.String({ description: "A file in the workspace to count instead" })),
  unit: Type.Optional(Type.Union([Type.Literal("lines"), Type.Literal("words"), Type.Literal("chars")], { description: "Only this count" })),
});
type Params = Static<typeof Params>;

export default () => ({
  name: "word_count",
  label: "Word count",
  description: "Counts lines, words and characters of `text`, or of the workspace file at `path`.",
  parameters: Params,
  async execute(_toolCallId: string, params: Params) {
    if (params.text === undefined && params.path === undefined) {
      throw new Error("Give `text` or `path`.");
    }
    const text = params.text ?? (await readFile(params.path!, "utf8"));
    const counts = {
      lines: text === "" ? 0 : text.split("\n").length,
      words: text.split(/\s+/).filter(Boolean).length,
      chars: [...text].length,
    };
    const shown = params.unit ? { [params.unit]: counts[params.unit] } : counts;
    return {
      content: [{ type: "text", text: Object.entries(shown).map(([k, v]) => `${k}: ${v}`).join("\n") }],
      details: counts,
    };
  },
});
