// The built-in `@mariozechner/pi-ai` (also under `@oh-my-pi/` and `@earendil-works/`): the
// schema helpers tools use (`Type`, `StringEnum`) and argument validation. Calling a model from
// a tool is not offered: those functions are named so that imports resolve, and throw a clear
// error when called.
const { Type, StringEnum } = require("@sinclair/typebox");

// Checks the arguments of a tool call against the tool's JSON Schema (the kinds and required
// keys); the error lists what is wrong, as pi's does.
const problems = (schema, value, at) => {
  if (!schema || typeof schema !== "object") return [];
  const out = [];
  const type = schema.type;
  const kind = value === null ? "null" : Array.isArray(value) ? "array" : typeof value;
  const fits = (name) => name === kind || (name === "integer" && Number.isInteger(value)) || (name === "number" && kind === "number");
  if (type && !(Array.isArray(type) ? type.some(fits) : fits(type))) out.push(`${at || "arguments"}: expected ${Array.isArray(type) ? type.join(" or ") : type}, got ${kind}`);
  if (Array.isArray(schema.enum) && !schema.enum.includes(value)) out.push(`${at || "arguments"}: must be one of ${schema.enum.map((v) => JSON.stringify(v)).join(", ")}`);
  if (kind === "object" && schema.properties) {
    for (const key of schema.required ?? []) if (!(key in value)) out.push(`${at ? `${at}.` : ""}${key}: required`);
    for (const [key, sub] of Object.entries(schema.properties)) if (key in value) out.push(...problems(sub, value[key], at ? `${at}.${key}` : key));
  }
  if (kind === "array" && schema.items) value.forEach((item, index) => out.push(...problems(schema.items, item, `${at}[${index}]`)));
  return out;
};
const validateToolArguments = (tool, toolCall) => {
  const found = problems(tool.parameters, toolCall.arguments, "");
  if (found.length > 0) throw new Error(`Validation failed for tool "${toolCall.name ?? tool.name}":\n${found.map((p) => `  - ${p}`).join("\n")}`);
  return toolCall.arguments;
};
const validateToolCall = (tools, toolCall) => {
  const tool = tools.find((item) => item.name === toolCall.name);
  if (!tool) throw new Error(`Tool "${toolCall.name}" not found`);
  return validateToolArguments(tool, toolCall);
};
const parseStreamingJson = (text) => {
  try { return JSON.parse(text); } catch { return {}; }
};
// JSON as models write it: fenced in ``` and with trailing commas, repaired before parsing.
const parseJsonWithRepair = (text) => {
  const source = String(text).trim();
  try { return JSON.parse(source); } catch (first) {
    const unfenced = source.replace(/^```[a-zA-Z]*\s*/, "").replace(/\s*```$/, "");
    const repaired = unfenced.replace(/,\s*([}\]])/g, "$1");
    try { return JSON.parse(repaired); } catch { throw first; }
  }
};
const unavailable = (name) => function () {
  throw new Error(`pi-ai's ${name} is not available to custom tools in toolhost: a tool cannot call models or change providers (toolhost's own agent does)`);
};
const MODEL_CALLS = ["AssistantMessageEventStream", "EventStream", "buildRequest", "calculateCost", "clearApiProviders", "complete", "completeSimple", "convertMessages", "createAssistantMessageEventStream", "extractRetryDelay", "getApiProvider", "getApiProviders", "getEnvApiKey", "getModel", "getModels", "getOverflowPatterns", "getProviders", "isContextOverflow", "modelsAreEqual", "registerApiProvider", "registerBuiltInApiProviders", "resetApiProviders", "setBedrockProviderModule", "stream", "streamAnthropic", "streamAzureOpenAIResponses", "streamGoogle", "streamGoogleGeminiCli", "streamGoogleVertex", "streamMistral", "streamOpenAICompletions", "streamOpenAIResponses", "streamSimple", "streamSimpleAnthropic", "streamSimpleAzureOpenAIResponses", "streamSimpleGoogle", "streamSimpleGoogleGeminiCli", "streamSimpleGoogleVertex", "streamSimpleMistral", "streamSimpleOpenAICompletions", "streamSimpleOpenAIResponses", "supportsXhigh", "unregisterApiProviders"];
const ai = { Type, StringEnum, validateToolArguments, validateToolCall, parseStreamingJson, parseJsonWithRepair };
for (const name of MODEL_CALLS) ai[name] = unavailable(name);
module.exports = ai;
