import { z } from "zod";
import { taskIdSchema } from "./common.js";

export const overlayEdgeSchema = z
  .object({
    from: taskIdSchema.describe("The dependency: the node that must be merged first."),
    to: taskIdSchema.describe("The dependent: `to` gains `from` in its dependencies."),
  })
  .strict();
export type OverlayEdge = z.infer<typeof overlayEdgeSchema>;

/** Frontmatter of `.forge/plans/<planId>/overlays/overlay-NNN.md`: an append-only amendment (see docs/formats.md#overlays). */
export const overlayFrontmatterSchema = z
  .object({
    id: z
      .string()
      .regex(/^overlay-\d{3,}$/, "must look like overlay-001")
      .describe("Overlay id; equals the file name without `.md`, numbered from 001 in order."),
    cr: z.string().min(1).describe("Id of the Change Request this overlay resolves."),
    emitted_by: z.string().min(1).describe("Who wrote it: the Captain agent or a person."),
    applied_at: z.string().describe("When it was applied (ISO-8601)."),
    added_tasks: z.array(taskIdSchema).default([]).describe("Ids of new tasks; their files are added under tasks/."),
    added_edges: z
      .array(overlayEdgeSchema)
      .default([])
      .describe("New edges. An overlay only adds nodes and edges, never removes or changes them."),
  })
  .strict()
  .describe("A plan overlay; the body is its rationale.");
export type OverlayFrontmatter = z.infer<typeof overlayFrontmatterSchema>;
