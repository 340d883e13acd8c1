import { ToolInputError, type ToolDefinition } from "./types";

/**
 * Evaluates arithmetic (+ - * / and parentheses) with a small recursive-descent
 * parser: no `eval`, so model-supplied input cannot run code.
 */
export const calculatorTool: ToolDefinition = {
  name: "calculator",
  description: "Evaluate an arithmetic expression with + - * / and parentheses. Returns the number.",
  parameters: {
    type: "object",
    properties: { expression: { type: "string", description: "e.g. (2 + 3) * 4" } },
    required: ["expression"],
    additionalProperties: false,
  },
  mutating: false,
  async execute(args) {
    const expression = args.expression;
    if (typeof expression !== "string" || expression.trim() === "") {
      throw new ToolInputError("expression must be a non-empty string");
    }
    const value = evaluate(expression);
    return { content: formatNumber(value) };
  },
};

export function evaluate(expression: string): number {
  const parser = new Parser(expression);
  const value = parser.expression();
  parser.expectEnd();
  if (!Number.isFinite(value)) throw new ToolInputError("result is not a finite number (division by zero?)");
  return value;
}

function formatNumber(value: number): string {
  return Number.isInteger(value) ? String(value) : String(Number(value.toPrecision(12)));
}

class Parser {
  private pos = 0;
  constructor(private readonly input: string) {}

  expression(): number {
    let value = this.term();
    for (let op = this.peekOp("+-"); op; op = this.peekOp("+-")) {
      this.pos += 1;
      value = op === "+" ? value + this.term() : value - this.term();
    }
    return value;
  }

  expectEnd(): void {
    this.skipSpaces();
    if (this.pos < this.input.length) throw new ToolInputError(`unexpected "${this.input[this.pos]}" at ${this.pos}`);
  }

  private term(): number {
    let value = this.factor();
    for (let op = this.peekOp("*/"); op; op = this.peekOp("*/")) {
      this.pos += 1;
      value = op === "*" ? value * this.factor() : value / this.factor();
    }
    return value;
  }

  private factor(): number {
    this.skipSpaces();
    const char = this.input[this.pos];
    if (char === "-") {
      this.pos += 1;
      return -this.factor();
    }
    if (char === "(") {
      this.pos += 1;
      const value = this.expression();
      this.skipSpaces();
      if (this.input[this.pos] !== ")") throw new ToolInputError("missing )");
      this.pos += 1;
      return value;
    }
    const match = /^\d+(?:\.\d+)?/.exec(this.input.slice(this.pos));
    if (!match) throw new ToolInputError(`expected a number at ${this.pos}`);
    this.pos += match[0].length;
    return Number(match[0]);
  }

  private peekOp(ops: string): string | undefined {
    this.skipSpaces();
    const char = this.input[this.pos];
    return char !== undefined && ops.includes(char) ? char : undefined;
  }

  private skipSpaces(): void {
    while (this.input[this.pos] === " ") this.pos += 1;
  }
}
