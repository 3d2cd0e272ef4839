/** The executor's public entry; its parts live in `./decide/`, one module per concern. */
export { agentId, branchName, decide, startRun, type Decision, type NewRun, type Rejection, type Transition } from "./decide/index.js";
