// A small `Intl` for an engine built without one: what extensions use it for — splitting text
// into characters or words (`Segmenter`), dates and times (`DateTimeFormat`, in UTC or the
// given offset-free zone name, English), numbers with grouping (`NumberFormat`), comparing
// strings (`Collator`), plural categories and relative times, in English only.
const pad = (value, width = 2) => String(value).padStart(width, "0");
const locale = (locales) => (Array.isArray(locales) ? locales[0] : locales) || "en-US";

class Segmenter {
  constructor(locales, options = {}) { this.locale = locale(locales); this.granularity = options.granularity || "grapheme"; }
  segment(input) {
    const text = String(input);
    const pieces = this.granularity === "word" ? text.match(/\w+|\s+|[^\w\s]+/gu) || [] : this.granularity === "sentence" ? text.match(/[^.!?]+[.!?]*\s*/g) || [] : Array.from(text);
    const segments = [];
    let index = 0;
    for (const segment of pieces) {
      const entry = { segment, index, input: text };
      if (this.granularity === "word") entry.isWordLike = /\w/u.test(segment);
      segments.push(entry);
      index += segment.length;
    }
    return Object.assign(segments, { containing: (at = 0) => segments.find((entry) => at >= entry.index && at < entry.index + entry.segment.length) });
  }
  resolvedOptions() { return { locale: this.locale, granularity: this.granularity }; }
}

const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];
const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
class DateTimeFormat {
  constructor(locales, options = {}) { this.locale = locale(locales); this.options = { ...options }; }
  formatToParts(value = Date.now()) {
    const date = new Date(value);
    const o = this.options;
    const any = ["year", "month", "day", "weekday", "hour", "minute", "second"].some((key) => o[key] !== undefined) || o.dateStyle || o.timeStyle;
    const wants = any ? o : { year: "numeric", month: "numeric", day: "numeric" };
    const parts = [];
    const push = (type, value) => { if (parts.length > 0) parts.push({ type: "literal", value: type === "hour" || parts[parts.length - 1].type === "hour" || parts[parts.length - 1].type === "minute" ? (type === "hour" ? ", " : ":") : type === "year" ? ", " : " " }); parts.push({ type, value: String(value) }); };
    if (wants.weekday || o.dateStyle === "full") push("weekday", wants.weekday === "short" ? DAYS[date.getUTCDay()].slice(0, 3) : DAYS[date.getUTCDay()]);
    if (wants.month || o.dateStyle) push("month", wants.month === "long" || o.dateStyle === "full" || o.dateStyle === "long" ? MONTHS[date.getUTCMonth()] : wants.month === "short" || o.dateStyle === "medium" ? MONTHS[date.getUTCMonth()].slice(0, 3) : wants.month === "2-digit" ? pad(date.getUTCMonth() + 1) : date.getUTCMonth() + 1);
    if (wants.day || o.dateStyle) push("day", wants.day === "2-digit" ? pad(date.getUTCDate()) : date.getUTCDate());
    if (wants.year || o.dateStyle) push("year", wants.year === "2-digit" ? pad(date.getUTCFullYear() % 100) : date.getUTCFullYear());
    if (wants.hour || o.timeStyle) push("hour", o.hour12 === false || o.hourCycle === "h23" ? pad(date.getUTCHours()) : ((date.getUTCHours() + 11) % 12) + 1);
    if (wants.minute || o.timeStyle) push("minute", pad(date.getUTCMinutes()));
    if (wants.second || o.timeStyle === "medium" || o.timeStyle === "long") push("second", pad(date.getUTCSeconds()));
    if ((wants.hour || o.timeStyle) && !(o.hour12 === false || o.hourCycle === "h23")) parts.push({ type: "literal", value: " " }, { type: "dayPeriod", value: date.getUTCHours() < 12 ? "AM" : "PM" });
    return parts;
  }
  format(value) { return this.formatToParts(value).map((part) => part.value).join(""); }
  formatRange(start, end) { return `${this.format(start)} – ${this.format(end)}`; }
  resolvedOptions() { return { locale: this.locale, calendar: "gregory", numberingSystem: "latn", timeZone: this.options.timeZone || "UTC", ...this.options }; }
}

class NumberFormat {
  constructor(locales, options = {}) { this.locale = locale(locales); this.options = { ...options }; }
  format(value) {
    const o = this.options;
    let number = Number(value);
    if (o.style === "percent") number *= 100;
    const maximum = o.maximumFractionDigits ?? (o.style === "currency" ? 2 : o.style === "percent" ? 0 : 3);
    const minimum = o.minimumFractionDigits ?? (o.style === "currency" ? 2 : 0);
    let text = number.toFixed(Math.max(minimum, maximum));
    if (text.includes(".")) text = text.replace(/0+$/, (zeros) => zeros.slice(0, Math.max(0, zeros.length - (maximum - minimum)))).replace(/\.$/, "");
    const [whole, fraction] = text.split(".");
    const grouped = o.useGrouping === false ? whole : whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
    const body = fraction ? `${grouped}.${fraction}` : grouped;
    if (o.style === "percent") return `${body}%`;
    if (o.style === "currency") return `${o.currency === "USD" || !o.currency ? "$" : `${o.currency} `}${body}`;
    if (o.style === "unit" && o.unit) return `${body} ${o.unit}`;
    return body;
  }
  formatToParts(value) { return [{ type: "integer", value: this.format(value) }]; }
  resolvedOptions() { return { locale: this.locale, numberingSystem: "latn", ...this.options }; }
}

class Collator {
  constructor(locales, options = {}) { this.locale = locale(locales); this.options = { ...options }; this.compare = this.compare.bind(this); }
  compare(a, b) {
    let x = String(a), y = String(b);
    if (this.options.sensitivity === "base" || this.options.sensitivity === "accent") { x = x.toLowerCase(); y = y.toLowerCase(); }
    if (this.options.numeric) {
      const chunks = (text) => text.match(/\d+|\D+/g) || [];
      const left = chunks(x), right = chunks(y);
      for (let i = 0; i < Math.min(left.length, right.length); i += 1) {
        const numbers = /^\d/.test(left[i]) && /^\d/.test(right[i]);
        const order = numbers ? Number(left[i]) - Number(right[i]) : left[i] < right[i] ? -1 : left[i] > right[i] ? 1 : 0;
        if (order !== 0) return Math.sign(order);
      }
      return Math.sign(left.length - right.length);
    }
    return x < y ? -1 : x > y ? 1 : 0;
  }
  resolvedOptions() { return { locale: this.locale, ...this.options }; }
}

class PluralRules {
  constructor(locales, options = {}) { this.locale = locale(locales); this.options = { ...options }; }
  select(count) {
    if (this.options.type === "ordinal") {
      const n = Math.abs(count) % 100;
      if (n >= 11 && n <= 13) return "other";
      return ["other", "one", "two", "few"][n % 10] || "other";
    }
    return Number(count) === 1 ? "one" : "other";
  }
  resolvedOptions() { return { locale: this.locale, ...this.options }; }
}

class RelativeTimeFormat {
  constructor(locales, options = {}) { this.locale = locale(locales); this.options = { ...options }; }
  format(value, unit) {
    const amount = Math.abs(Number(value));
    const name = String(unit).replace(/s$/, "");
    if (this.options.numeric === "auto" && amount === 0) return name === "day" ? "today" : `this ${name}`;
    const label = `${amount} ${name}${amount === 1 ? "" : "s"}`;
    return Number(value) < 0 || Object.is(Number(value), -0) ? `${label} ago` : `in ${label}`;
  }
}

class ListFormat {
  constructor(locales, options = {}) { this.locale = locale(locales); this.options = { ...options }; }
  format(list) {
    const items = [...list].map(String);
    const word = this.options.type === "disjunction" ? "or" : "and";
    if (items.length <= 2) return items.join(` ${word} `);
    return `${items.slice(0, -1).join(", ")}, ${word} ${items[items.length - 1]}`;
  }
}

module.exports = {
  Segmenter, DateTimeFormat, NumberFormat, Collator, PluralRules, RelativeTimeFormat, ListFormat,
  getCanonicalLocales: (locales) => (locales === undefined ? [] : Array.isArray(locales) ? locales.map(String) : [String(locales)]),
  supportedValuesOf: () => [],
};
