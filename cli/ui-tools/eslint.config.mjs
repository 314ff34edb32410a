// ESLint over the web UI's scripts (cli/ui/*.js): classic browser scripts, each defining one global
// (see ui.d.ts), which `sna view` also inlines into its page. Run from cli/ (`npm run lint` here
// does), where the pattern below finds them.
import js from '@eslint/js';
import globals from 'globals';

export default [
  {
    files: ['ui/*.js'],
    ...js.configs.recommended,
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: 'script',
      globals: {
        ...globals.browser,
        SnaHighlight: 'writable',
        SnaFormat: 'writable',
        SnaTimeline: 'writable',
        SnaApi: 'writable',
        SnaPage: 'writable',
        SnaApp: 'writable',
      },
    },
    rules: {
      ...js.configs.recommended.rules,
      eqeqeq: ['error', 'always'],
      'no-implicit-globals': 'error',
      'no-var': 'error',
      'prefer-const': 'error',
      'no-shadow': 'error',
      'no-unused-vars': ['error', { caughtErrors: 'none' }],
      'no-restricted-syntax': [
        'error',
        {
          // `sna view` puts the scripts inside <script> elements of its page.
          selector: 'Literal[value=/<!--|<\\/script/i], TemplateElement[value.raw=/<!--|<\\/script/i]',
          message: 'an HTML comment opener or a script end tag would end or change the <script> element sna view inlines this file in; split the string',
        },
      ],
    },
  },
];
