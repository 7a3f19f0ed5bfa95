/**
 * The slice of OpenClaw's plugin API this plugin uses, typed locally so the
 * plugin has no dependency on the `openclaw` package. Shapes follow
 * openclaw 2026.9.6 (`dist/plugin-sdk`, `PluginHook*` types); every field
 * OpenClaw documents as optional is optional here too, and the code treats
 * a missing field as unknown, never as a safe default.
 */
export {};
