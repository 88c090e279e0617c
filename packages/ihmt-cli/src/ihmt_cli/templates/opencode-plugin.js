// ihmt-memory: added by `ihmt install opencode`; `ihmt uninstall opencode` deletes this file.
//
// Recall from the IHMT long-term memory without waiting for a tool call: on each user
// message, opencode's `chat.message` hook runs `ihmt hook prompt` (and, on a session's
// first message, `ihmt hook session-start`) and adds what it prints as a synthetic text
// part. `ihmt hook` prints nothing when the memory has nothing confident to say, never
// repeats a memory within a session, and exits 0 whatever happens.
import { spawnSync } from "node:child_process";

const IHMT = __IHMT_COMMAND__;
const IHMT_HOME = __IHMT_HOME__;
const TIMEOUT_MS = 10000;

function recall(event, payload) {
  try {
    const [program, ...args] = IHMT;
    const done = spawnSync(
      program,
      [...args, "hook", event, "--agent", "opencode", "--home", IHMT_HOME],
      { input: JSON.stringify(payload), encoding: "utf8", timeout: TIMEOUT_MS },
    );
    return done.status === 0 && typeof done.stdout === "string" ? done.stdout.trim() : "";
  } catch {
    return "";
  }
}

export const IhmtMemory = async ({ directory }) => {
  const started = new Set();
  return {
    "chat.message": async (input, output) => {
      const sessionID = input.sessionID;
      const prompt = output.parts
        .filter((part) => part.type === "text" && !part.synthetic)
        .map((part) => part.text)
        .join("\n");
      const texts = [];
      if (!started.has(sessionID)) {
        started.add(sessionID);
        texts.push(recall("session-start", { session_id: sessionID, cwd: directory, source: "opencode" }));
      }
      if (prompt.trim()) {
        texts.push(recall("prompt", { session_id: sessionID, cwd: directory, prompt }));
      }
      const text = texts.filter(Boolean).join("\n\n");
      if (!text) return;
      const last = output.parts[output.parts.length - 1];
      output.parts.push({
        id: `${last && last.id ? last.id : "prt_"}ihmt`,
        sessionID,
        messageID: output.message.id,
        type: "text",
        synthetic: true,
        text,
      });
    },
  };
};
