/** File helpers of the task job: existence, listing, and the copy of the session into the record folder. */
import { cp, mkdir, readFile, readdir, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";

/** Transcripts and other session files above this are cut (head and tail kept) in the record commit. */
const MAX_RECORD_FILE_BYTES = 1_000_000;

export async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}

export async function listFiles(dir: string, prefix = ""): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(path.join(dir, prefix), { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...(await listFiles(dir, rel)));
    else if (e.isFile()) out.push(path.join(dir, rel));
  }
  return out;
}

/** Copies the session folder into the record folder; oversized files keep their head and tail. */
export async function copyForRecord(from: string, to: string): Promise<void> {
  await rm(to, { recursive: true, force: true });
  await mkdir(to, { recursive: true });
  for (const file of await listFiles(from)) {
    const rel = path.relative(from, file);
    if (path.basename(rel).includes(".tmp.")) continue;
    const dest = path.join(to, rel);
    await mkdir(path.dirname(dest), { recursive: true });
    const size = (await stat(file)).size;
    if (size <= MAX_RECORD_FILE_BYTES) await cp(file, dest);
    else {
      const buf = await readFile(file);
      const half = Math.floor(MAX_RECORD_FILE_BYTES / 2);
      await writeFile(
        dest,
        Buffer.concat([
          buf.subarray(0, half),
          Buffer.from(`\n[… ${size - 2 * half} bytes cut by the Forge runner …]\n`),
          buf.subarray(size - half),
        ]),
      );
    }
  }
}
