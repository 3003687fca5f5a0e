/// <reference types="vite/client" />

interface ImportMetaEnv {
  /** The hostrelay server the page talks to when it is not the page's own origin (set at build time). */
  readonly VITE_HOSTRELAY_URL?: string;
}
