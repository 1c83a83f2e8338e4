import { mount } from 'svelte';
import './ui/app.css';
import App from './ui/App.svelte';
import { registerServiceWorker } from './offline/register';

const target = document.getElementById('app');
if (!target) throw new Error('index.html has no #app element');
const app = mount(App, { target });
registerServiceWorker();
export default app;
