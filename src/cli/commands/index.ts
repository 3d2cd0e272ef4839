import type { Command } from "commander";
import type { CliIo } from "../io.js";
import { registerApp } from "./app.js";
import { registerDemo } from "./demo.js";
import { registerDoctor } from "./doctor.js";
import { registerGraph } from "./graph.js";
import { registerInit } from "./init.js";
import { registerReport } from "./report.js";
import { registerSim } from "./sim.js";
import { registerSpawn } from "./spawn.js";
import { registerTick } from "./tick.js";
import { registerValidate } from "./validate.js";

export interface CommandContext {
  io: CliIo;
  /** The process exit code `main` returns once the command's action finished. */
  setExitCode(code: number): void;
}

/** Adds one subcommand to the program. */
export type CommandRegistration = (program: Command, ctx: CommandContext) => void;

/** Every `forge` subcommand. Adding one is one line here. */
export const COMMANDS: readonly CommandRegistration[] = [
  registerValidate,
  registerGraph,
  registerSpawn,
  registerSim,
  registerTick,
  registerDemo,
  registerReport,
  registerInit,
  registerApp,
  registerDoctor,
];
